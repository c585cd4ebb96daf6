"""An offline player for animations and precomputed parameter sweeps.

Two ways in:

* :func:`to_html` plays a matplotlib ``FuncAnimation`` frame by frame;
* :func:`sweep_html` draws one figure per value of a parameter and lets a
  reader scrub through them -- a calculator that works with no kernel.

Both render every frame to PNG when the notebook runs and wrap the frames in
a small self-contained HTML player: first / previous / play / pause / next /
last buttons (inline SVG icons, so no icon font is needed), a slider, and the
arrow keys when the player has focus. The player loads nothing from the
network (unlike ``FuncAnimation.to_jshtml``, which links Font Awesome from a
CDN and numbers its elements at random), and its element id is derived from
the frames' bytes, so re-running a notebook gives byte-identical output.

>>> import matplotlib.pyplot as plt
>>> def draw(n):
...     fig, ax = plt.subplots(figsize=(2, 1))
...     ax.bar([0], [n])
...     return fig
>>> a = sweep_html(draw, [1, 2, 3], "n = {}", alt="A bar of height n").data
>>> b = sweep_html(draw, [1, 2, 3], "n = {}", alt="A bar of height n").data
>>> a == b, a.count('class="gotw-frame"'), "https://" in a
(True, 3, False)
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
from collections.abc import Callable, Iterable, Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
from IPython.display import HTML  # noqa: E402
from matplotlib.animation import AbstractMovieWriter  # noqa: E402

__all__ = ["render_png", "player_html", "to_html", "sweep_html"]

_SCRIPT = """
<script>
(function () {
  if (window.gotwPlayer) { return; }
  window.gotwPlayer = {
    show: function (id, i) {
      var p = document.getElementById(id);
      var frames = p.querySelectorAll('.gotw-frame');
      var n = frames.length;
      i = Math.max(0, Math.min(n - 1, i));
      for (var k = 0; k < n; k++) { frames[k].style.display = (k === i) ? 'block' : 'none'; }
      p.dataset.frame = i;
      p.querySelector('.gotw-slider').value = i;
      p.querySelector('.gotw-label').textContent = frames[i].dataset.label;
    },
    step: function (id, d) {
      var p = document.getElementById(id);
      this.show(id, parseInt(p.dataset.frame || '0', 10) + d);
    },
    play: function (id) {
      var self = this, p = document.getElementById(id);
      this.pause(id);
      var n = p.querySelectorAll('.gotw-frame').length;
      p._timer = setInterval(function () {
        var i = parseInt(p.dataset.frame || '0', 10) + 1;
        if (i >= n) { i = 0; }
        self.show(id, i);
      }, parseInt(p.dataset.interval, 10));
    },
    pause: function (id) {
      var p = document.getElementById(id);
      if (p._timer) { clearInterval(p._timer); p._timer = null; }
    },
    key: function (id, event) {
      var moves = {ArrowLeft: -1, ArrowRight: 1};
      if (event.key in moves) { this.pause(id); this.step(id, moves[event.key]); event.preventDefault(); }
      else if (event.key === 'Home') { this.pause(id); this.show(id, 0); event.preventDefault(); }
      else if (event.key === 'End') { this.pause(id); this.show(id, 1e9); event.preventDefault(); }
    }
  };
})();
</script>
"""

_STYLE = (
    "<style>.gotw-player{max-width:100%;margin:0.5em 0}.gotw-player img{max-width:100%;height:auto;"
    "background:#fff}.gotw-controls{display:flex;flex-wrap:wrap;gap:0.3em;align-items:center;margin-top:0.3em}"
    ".gotw-controls button{font:inherit;padding:0.15em 0.5em;cursor:pointer;display:inline-flex;"
    "align-items:center;gap:0.3em}.gotw-controls svg{width:1em;height:1em;fill:currentColor}"
    ".gotw-slider{flex:1 1 12em}.gotw-label{font-family:monospace;margin-left:0.5em}</style>"
)

#: Button icons, 16 x 16 SVG paths (drawn with the text colour, so they follow light and dark themes).
_ICONS = {
    "first": "M2 3h2v10H2zM9 3v10L4 8zM15 3v10l-5-5z",
    "previous": "M4 3h2v10H4zM13 3v10L7 8z",
    "play": "M4 2v12l10-6z",
    "pause": "M4 3h3v10H4zM9 3h3v10H9z",
    "next": "M3 3v10l6-5zM10 3h2v10h-2z",
    "last": "M1 3v10l5-5zM7 3v10l5-5zM12 3h2v10h-2z",
}


def _icon(name: str) -> str:
    return f'<svg viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="{_ICONS[name]}"/></svg>'


def render_png(fig, dpi: int = 80) -> bytes:
    """PNG bytes of ``fig`` with no timestamp or version in its metadata (byte-stable across runs)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def player_html(frames: Sequence[bytes], labels: Sequence[str] | None = None, alt: str = "",
                interval: int = 700, start: int = 0) -> str:
    """HTML of a self-contained player over PNG ``frames`` (bytes), one ``labels`` entry per frame.

    ``alt`` describes what the animation shows (screen readers hear it with
    the frame's label); ``interval`` is the time between frames in ms when
    playing; ``start`` the frame shown first.

    >>> html_text = player_html([b"a", b"b"], ["one", "two"], alt="Two frames")
    >>> html_text.count('class="gotw-frame"'), 'aria-label="next"' in html_text
    (2, True)
    >>> player_html([], alt="nothing")
    Traceback (most recent call last):
    ...
    ValueError: frames must hold at least one PNG image
    """
    if len(frames) == 0:
        raise ValueError("frames must hold at least one PNG image")
    if labels is None:
        labels = [f"frame {i + 1} of {len(frames)}" for i in range(len(frames))]
    labels = [str(label) for label in labels]
    if len(labels) != len(frames):
        raise ValueError(f"labels must have one entry per frame ({len(frames)}), got {len(labels)}")
    if int(interval) < 1:
        raise ValueError(f"interval must be >= 1 ms, got {interval}")
    start = max(0, min(len(frames) - 1, int(start)))
    digest = hashlib.sha1()
    for f in frames:
        digest.update(f)
    digest.update("|".join([*labels, alt, str(int(interval)), str(start)]).encode())
    pid = "gotw-" + digest.hexdigest()[:12]
    alt_text = html.escape(alt, quote=True)
    imgs = []
    for i, (png, label) in enumerate(zip(frames, labels)):
        data = base64.b64encode(png).decode("ascii")
        shown = "block" if i == start else "none"
        imgs.append(
            f'<img class="gotw-frame" data-label="{html.escape(label, quote=True)}" '
            f'style="display:{shown}" alt="{alt_text} ({html.escape(label, quote=True)})" '
            f'src="data:image/png;base64,{data}"/>'
        )
    js = "window.gotwPlayer"
    buttons = [
        ("first", "", f"{js}.pause('{pid}');{js}.show('{pid}',0)"),
        ("previous", "", f"{js}.pause('{pid}');{js}.step('{pid}',-1)"),
        ("play", "play", f"{js}.play('{pid}')"),
        ("pause", "pause", f"{js}.pause('{pid}')"),
        ("next", "", f"{js}.pause('{pid}');{js}.step('{pid}',1)"),
        ("last", "", f"{js}.pause('{pid}');{js}.show('{pid}',{len(frames) - 1})"),
    ]
    controls = "".join(
        f'<button type="button" class="gotw-{name}" title="{name}" aria-label="{name}" onclick="{action}">'
        f"{_icon(name)}{text}</button>"
        for name, text, action in buttons
    )
    slider = (
        f'<input type="range" class="gotw-slider" aria-label="frame" min="0" max="{len(frames) - 1}" '
        f'value="{start}" oninput="{js}.pause(\'{pid}\');{js}.show(\'{pid}\',parseInt(this.value,10))"/>'
    )
    label = f'<span class="gotw-label" aria-live="polite">{html.escape(labels[start])}</span>'
    return (
        f'{_STYLE}<div class="gotw-player" id="{pid}" data-frame="{start}" data-interval="{int(interval)}" '
        f'tabindex="0" role="group" aria-label="{alt_text}" onkeydown="{js}.key(\'{pid}\',event)">'
        f'{"".join(imgs)}<div class="gotw-controls">{controls}{slider}{label}</div></div>{_SCRIPT}'
    )


class _PngFrames(AbstractMovieWriter):
    """A matplotlib movie writer that keeps every frame as PNG bytes (public writer API, no file)."""

    def __init__(self, dpi: int) -> None:
        super().__init__(fps=1)
        self.frames: list[bytes] = []
        self._png_dpi = dpi

    def setup(self, fig, outfile, dpi=None) -> None:
        self.fig = fig
        # Animation.save asks the canvas to redraw after drawing each frame, and grab_frame's savefig
        # draws the figure again: the first of those two renders is never seen, so it is skipped.
        fig.canvas.draw_idle = _no_redraw

    def grab_frame(self, **savefig_kwargs) -> None:
        self.frames.append(render_png(self.fig, dpi=self._png_dpi))

    def finish(self) -> None:
        vars(self.fig.canvas).pop("draw_idle", None)   # the canvas's own method again


def _no_redraw(*args, **kwargs) -> None:
    """Stands in for ``canvas.draw_idle`` while :class:`_PngFrames` records (each frame is drawn by savefig)."""


def to_html(anim, labels: Sequence[str] | None = None, alt: str = "", interval: int | None = None,
            dpi: int = 80) -> HTML:
    """Render a matplotlib ``FuncAnimation`` into the offline player; closes its figure.

    Every frame of ``anim`` is drawn once, through matplotlib's public
    ``Animation.save`` with a writer that keeps each frame as PNG bytes (no
    file, no private attribute). ``interval`` defaults to the animation's
    own (its timer's ``interval``, in ms).
    """
    writer = _PngFrames(dpi)
    anim.save("frames.png", writer=writer)
    plt.close(writer.fig)
    source = getattr(anim, "event_source", None)
    step = interval if interval is not None else int(getattr(source, "interval", 700) or 700)
    return HTML(player_html(writer.frames, labels, alt=alt, interval=step))


def sweep_html(draw: Callable[[object], object], values: Iterable, label: Callable[[object], str] | str = "{}",
               alt: str = "", start: int = 0, dpi: int = 80) -> HTML:
    """A precomputed scrubber: ``draw(value)`` returns a figure for each value; the reader slides through them.

    ``label`` is a format string (``"N = {}"``) or a function of the value.
    """
    frames, labels = [], []
    for value in values:
        fig = draw(value)
        frames.append(render_png(fig, dpi=dpi))
        plt.close(fig)
        labels.append(label(value) if callable(label) else label.format(value))
    return HTML(player_html(frames, labels, alt=alt, start=start))

"""The offline animation player: deterministic, self-contained, one frame per animation step."""

from __future__ import annotations

import gc
import re
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.animation as manim  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from commlib.views.animation import player_html, sweep_html, to_html  # noqa: E402

URL = re.compile(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}", re.I)


def _anim(frames: int):
    fig, ax = plt.subplots(figsize=(2, 1.5))
    (line,) = ax.plot([], [])
    ax.set_xlim(0, frames)
    ax.set_ylim(0, frames * frames)

    def draw(i):
        line.set_data(range(i + 1), [k * k for k in range(i + 1)])
        return (line,)

    return manim.FuncAnimation(fig, draw, frames=frames, interval=250)


def _frames(markup: str) -> list[str]:
    return re.findall(r'class="gotw-frame"[^>]*src="(data:image/png;base64,[^"]+)"', markup)


def test_to_html_has_one_distinct_frame_per_step_and_no_network():
    markup = to_html(_anim(5), labels=[f"t = {i}" for i in range(5)], alt="A parabola drawn point by point").data
    frames = _frames(markup)
    assert len(frames) == 5
    assert len(set(frames)) == 5, "consecutive frames must differ"
    assert not URL.search(markup.replace("http://www.w3.org", "")), "the player must not load anything"
    assert "fontawesome" not in markup.lower() and "<link" not in markup
    assert 'data-interval="250"' in markup, "the animation's own interval is kept"
    assert markup.count('alt="A parabola drawn point by point (t = ') == 5


def test_output_is_byte_identical_across_runs():
    one = to_html(_anim(3), alt="x").data
    two = to_html(_anim(3), alt="x").data
    assert one == two
    ids = re.findall(r'class="gotw-player" id="([^"]+)"', one)
    assert len(ids) == 1 and one.count(f"'{ids[0]}'") >= 6, "every control addresses its own player"


def test_different_animations_get_different_ids():
    ids = {re.search(r'id="(gotw-[0-9a-f]+)"', to_html(_anim(n), alt="x").data).group(1) for n in (2, 3, 4)}
    assert len(ids) == 3


def test_no_matplotlib_warning_when_the_animation_is_collected():
    anim = _anim(2)
    to_html(anim, alt="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del anim
        gc.collect()


def test_sweep_starts_on_the_requested_frame():
    def draw(v):
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.bar([0], [v])
        return fig

    markup = sweep_html(draw, [1, 2, 3], label="v = {}", alt="bars", start=1).data
    shown = re.findall(r'class="gotw-frame" data-label="([^"]+)" style="display:block"', markup)
    assert shown == ["v = 2"]
    assert 'value="1"' in markup and ">v = 2</span>" in markup


@pytest.mark.parametrize("kwargs, word", [
    ({"frames": []}, "frames"),
    ({"frames": [b"a"], "labels": ["x", "y"]}, "labels"),
    ({"frames": [b"a"], "interval": 0}, "interval"),
])
def test_bad_input_names_the_parameter(kwargs, word):
    with pytest.raises(ValueError, match=word):
        player_html(**kwargs)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=8), min_size=1, max_size=6), st.integers(-3, 9))
def test_exactly_one_frame_is_shown_and_start_is_clamped(frames, start):
    markup = player_html(frames, alt="demo", start=start)
    shown = markup.count('style="display:block"')
    assert shown == 1
    expected = max(0, min(len(frames) - 1, start))
    assert f'data-frame="{expected}"' in markup
    assert markup.count('class="gotw-frame"') == len(frames)

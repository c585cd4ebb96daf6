"""Figure style shared by every chapter: one colour-blind-safe palette.

The palette is Okabe & Ito's (2008), distinguishable under the common forms
of colour-vision deficiency. Use the colours in order, or by name.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["PALETTE", "COLORS", "MARKERS", "figure", "color", "style"]

#: Okabe-Ito colours by name.
PALETTE: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}

#: The same colours in the order plots use them.
COLORS: list[str] = [PALETTE[k] for k in ("blue", "orange", "green", "vermillion", "sky", "purple", "yellow", "black")]

#: Markers paired with COLORS, so lines differ in shape as well as colour.
MARKERS: list[str] = ["o", "s", "^", "D", "v", "P", "X", "*"]


def color(i: int) -> str:
    """The i-th palette colour (wraps around)."""
    return COLORS[i % len(COLORS)]


def style() -> None:
    """Apply the book's matplotlib style (palette, sizes, deterministic output)."""
    plt.rcParams.update(
        {
            "axes.prop_cycle": matplotlib.cycler(color=COLORS),
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "font.size": 10,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "svg.hashsalt": "gradients-on-the-wire",
            "path.simplify": True,
        }
    )


def figure(width: float = 6.4, height: float = 3.6, **kwargs):
    """A new ``(fig, ax)`` in the book's style; extra kwargs go to ``plt.subplots``."""
    style()
    return plt.subplots(figsize=(width, height), **kwargs)

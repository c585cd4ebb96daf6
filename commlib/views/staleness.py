"""Views for chapter 5: staleness histograms, staleness against N/K, learning-rate rules, Downpour.

Everything drawn here is computed by :mod:`commlib.sgd` and the experiments of
:mod:`commlib.experiments.staleness`; this module only lays it out.
"""

from __future__ import annotations

import numpy as np

from ..experiments.summaries import PROTOCOL_LABELS
from .plots import COLORS, MARKERS, color, figure
from .sync_async import error_vs_time_figure, staleness_histogram

__all__ = ["staleness_histogram", "staleness_vs_nk_figure", "lr_rule_figure", "downpour_figure"]


def staleness_vs_nk_figure(rows: list[dict], workers: int):
    """Measured mean staleness against N/K, with the exact means as lines."""
    fig, ax = figure(6.4, 3.6)
    x = np.array([r["N/K"] for r in rows])
    grid = np.linspace(x.min(), x.max(), 50)
    ax.plot(grid, grid, color=COLORS[7], ls=":", lw=1, label="N/K (Gupta et al.)")
    for i, protocol in enumerate(("k_batch_async", "k_async")):
        ax.plot(x, [r[protocol + " exact"] for r in rows], color=color(i), lw=1.2,
                label=f"{PROTOCOL_LABELS[protocol]}: exact mean")
        ax.plot(x, [r[protocol] for r in rows], ls="none", marker=MARKERS[i], color=color(i),
                label=f"{PROTOCOL_LABELS[protocol]}: simulated")
    ax.set_xlabel(f"N/K (N = {workers} learners)")
    ax.set_ylabel("mean staleness (updates)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig



def lr_rule_figure(runs: dict, smooth: int = 5):
    """Training loss and test error against wall-clock time for the runs of :func:`lr_rule_runs`."""
    return error_vs_time_figure(runs, smooth=smooth)



def downpour_figure(runs: dict, smooth: int = 3):
    """Loss and error against wall-clock time for the runs of :func:`downpour_runs`."""
    return error_vs_time_figure(runs, smooth=smooth)

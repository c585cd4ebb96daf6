"""Views for chapter 5: staleness histograms, staleness against n/K, learning-rate rules, Downpour.

Everything drawn here is computed by :mod:`commlib.sgd.simulate` and the experiments of
:mod:`commlib.experiments.sgd.staleness`; this module only lays it out.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

from ...experiments.sgd import staleness as staleness_experiments
from ...experiments.sgd.staleness import NOTES_RATE
from ...experiments.sgd.summaries import PROTOCOL_LABELS
from ...sgd import stale_quadratic
from ..plots import COLORS, MARKERS, color, figure
from ..tables import markdown_table
from .sync_async import _smooth, staleness_histogram

__all__ = ["staleness_histogram", "staleness_vs_nk_figure", "rate_sweep_axes", "lr_rule_figure", "stalls_figure",
           "downpour_figure", "stable_step_table", "lr_table", "gupta_table", "shared_step_table",
           "carry_table", "downpour_table", "noise_gain_figure", "noise_gain_table",
           "same_reach_table"]


def staleness_vs_nk_figure(rows: list[dict], workers: int):
    """Measured mean staleness against n/K, with the exact means as lines."""
    fig, ax = figure(6.4, 3.6)
    x = np.array([r["n/K"] for r in rows])
    grid = np.linspace(x.min(), x.max(), 50)
    ax.plot(grid, grid, color=COLORS[7], ls=":", lw=1, label="n/K (Gupta et al.)")
    for i, protocol in enumerate(("k_batch_async", "k_async")):
        ax.plot(x, [r[protocol + " exact"] for r in rows], color=color(i), lw=1.2,
                label=f"{PROTOCOL_LABELS[protocol]}: exact mean")
        ax.plot(x, [r[protocol] for r in rows], ls="none", marker=MARKERS[i], color=color(i),
                label=f"{PROTOCOL_LABELS[protocol]}: simulated")
    ax.set_xlabel(f"n/K (n = {workers} learners)")
    ax.set_ylabel("mean staleness (updates)")
    ax.legend(fontsize=8, handlelength=3.5)
    fig.tight_layout()
    return fig



def _loss_curve(ax, run, label, i, ls="-", smooth=1, lw=1.6):
    """Training loss against gradients applied (PS updates x gradients per update)."""
    g = (np.asarray(run.eval_index) + 1) * run.k
    ax.plot(np.concatenate([[0], g]), np.concatenate([[run.initial_loss], _smooth(np.asarray(run.losses), smooth)]),
            color=color(i), ls=ls, lw=lw, label=label)


def _loss_panel(ax, curves, smooth: int):
    """Loss curves ``(run, label, colour index, line style)`` against gradients applied, zoomed on their floor."""
    for run, label, i, ls in curves:
        _loss_curve(ax, run, label, i, ls=ls, smooth=smooth)
    ymin = min(np.nanmin(r.losses) for r, *_ in curves)
    ax.set_ylim(ymin * 0.95, ymin * 1.6)
    ax.set_xlabel("gradients applied")
    ax.set_ylabel("training loss (nats)")
    ax.legend(fontsize=7, handlelength=3.5)


#: How each swept value is named in legends.
_SWEEP_LABELS = {
    "constant": "constant rate η",
    "no staleness": "constant rate η, one learner (no staleness)",
    "staleness": "rate/staleness rule, base rate η₀",
    "distance": "distance rule, cap η_max",
}


#: One colour per rule or optimiser in every figure of the chapter; dashed: the control without staleness.
_SWEEP_STYLES = {"constant": (0, "-"), "no staleness": (0, "--"), "staleness": (2, "-."), "distance": (3, ":"),
                 "SGD": (0, "-"), "SGD, one replica": (0, "--"), "Adagrad": (5, "-"), "Adagrad, one replica": (5, "--")}


def rate_sweep_axes(ax, sweeps: dict, labels: dict | None = None, workers: int | None = None):
    """Final training loss against the swept rate, one line per sweep; the best point of each is ringed.
    A sweep's colour names its rule (or optimiser) and a dashed line its control without staleness."""
    labels = labels or {}
    for j, (key, sw) in enumerate(sweeps.items()):
        i, ls = _SWEEP_STYLES.get(key, (j, "-"))
        label = labels.get(key, _SWEEP_LABELS.get(key, key))
        if workers and key != "no staleness" and sw.workers > 1 and key in _SWEEP_LABELS:
            label += f", {sw.workers} learners"
        ax.plot(sw.values, sw.losses, color=color(i), marker=MARKERS[i], ls=ls, lw=1.4,
                label=label)
        # rings of different sizes, so that two bests at the same point stay apart
        ax.plot([sw.best_value], [sw.best_loss], ls="none", marker="o", ms=11 + 4 * j, mfc="none", mec=color(i),
                mew=1.4)
    ax.set_xscale("log")
    ticks = []
    for v in sorted({v for sw in sweeps.values() for v in sw.values}):
        if not ticks or v / ticks[-1] > 1.3:       # no two labels closer than that on the log axis
            ticks.append(v)
    ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("each rule's own rate on its grid: η, η₀ or η_max")
    ax.set_ylabel("final training loss (nats)")
    return ax


def lr_rule_figure(study, smooth: int = 3):
    """Left: loss curves at the nominal rate and at the best constant rate, with and without staleness.
    Right: each rule's final loss over its grid; a rule has one colour in both panels
    (:func:`commlib.experiments.sgd.staleness.lr_rule_study`)."""
    sw, nominal = study.sweeps, study.nominal
    missing = [k for k in ("constant", "staleness", "distance", "no staleness") if k not in sw]
    if nominal is None or missing:
        raise ValueError("study must have a nominal rate and the sweeps constant, staleness, distance and "
                         f"no staleness (missing: {', '.join(missing) or 'nominal'})")
    fig, (ax1, ax2) = figure(9.6, 4.0, ncols=2)
    curves = [(sw[key].run(nominal), f"{label} = {nominal:g}", *_SWEEP_STYLES[key])
              for key, label in (("constant", "constant η"), ("staleness", "rate/staleness, η₀"),
                                 ("distance", "distance rule, η_max"), ("no staleness", "one learner, η"))]
    _loss_panel(ax1, curves, smooth)
    rate_sweep_axes(ax2, {k: sw[k] for k in ("constant", "no staleness", "staleness", "distance") if k in sw},
                    labels={"distance": f"distance rule, cap η_max (C = {study.lr_c:g})"}, workers=study.workers)
    ax2.axvline(nominal, color=COLORS[7], lw=0.8, ls=":")
    ax2.annotate(f"shared rate {nominal:g}", (nominal, 1.0), xycoords=("data", "axes fraction"), xytext=(-4, -10),
                 textcoords="offset points", ha="right", fontsize=7)
    ax1.set_title(f"at the shared rate {nominal:g}", fontsize=9)
    ax2.set_title("each rule over its own grid; rings: each grid's best", fontsize=9)
    ax2.legend(fontsize=7, handlelength=3.5)
    fig.tight_layout()
    return fig


def noise_gain_figure(taus=(1, 4, 15), fractions=None, marks=()):
    """The noise gain of a fixed delay (:func:`commlib.sgd.stale_quadratic.noise_variance_gain`) against the step as a
    fraction of its stability limit, one line per staleness in ``taus``; ``marks``: ``{label: (fraction, gain)}``
    points to set on the chart (such as the tuned step). The lines nearly coincide: how near the step is to its
    limit, not the delay itself, sets how much the noise is amplified."""
    taus = tuple(taus)
    if not taus or any(int(t) != t or t < 0 for t in taus):
        raise ValueError(f"taus must be counts of updates (0 or more), got {taus!r}")
    fractions = np.linspace(0.02, 0.9, 45) if fractions is None else np.asarray(fractions, dtype=float)
    if fractions.size == 0 or np.any(fractions <= 0) or np.any(fractions >= 1):
        raise ValueError("fractions must lie strictly between 0 and 1 (of the stability limit)")
    fig, ax = figure(6.4, 3.6)
    for i, tau in enumerate(taus):
        limit = stale_quadratic.largest_stable_step(int(tau))
        gains = [stale_quadratic.noise_variance_gain(f * limit, int(tau)) for f in fractions]
        ax.plot(fractions, gains, color=color(i), ls=("-", "--", "-.", ":")[i % 4], lw=1.6,
                marker=MARKERS[i], markevery=max(1, len(fractions) // 8), ms=5,
                label=f"gradient always {int(tau)} update{'s' if tau != 1 else ''} old")
    for j, (label, (f, g)) in enumerate(dict(marks).items()):
        ax.plot([f], [g], ls="none", marker="o", ms=10, mfc="none", mec=COLORS[7], mew=1.4,
                label=label if j == 0 else None)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("step ζ = ηλ as a fraction of its stability limit")
    ax.set_ylabel("variance of the parameters,\nstale over not stale")
    ax.legend(fontsize=8, handlelength=3.5, loc="upper left")   # the curves climb at the right
    fig.tight_layout()
    return fig


def stalls_figure(study):
    """Final loss over each rule's grid when learners stall now and then."""
    fig, ax = figure(6.4, 3.6)
    rate_sweep_axes(ax, study.sweeps, labels={"distance": f"distance rule, cap η_max (C = {study.lr_c:g})"},
                    workers=study.workers)
    if "distance" not in study.sweeps:
        ax.set_xlabel("each rule's own rate on its grid: η or η₀")
    ax.legend(fontsize=8, handlelength=3.5)
    fig.tight_layout()
    return fig


def downpour_figure(sweeps: dict, nominal: float = NOTES_RATE, smooth: int = 3):
    """Left: loss curves of SGD and Adagrad at the shared rate and each at its best rate.
    Right: final loss over each one's grid, with the one-replica control where the study has it
    (:func:`commlib.experiments.sgd.staleness.downpour_study`)."""
    fig, (ax1, ax2) = figure(9.6, 4.0, ncols=2)
    curves = []
    for i, (name, sw) in enumerate((k, v) for k, v in sweeps.items() if "one replica" not in k):
        i = _SWEEP_STYLES.get(name, (i, "-"))[0]
        curves.append((sw.run(nominal), f"{name}, rate {nominal:g}", i, ":"))
        curves.append((sw.run(sw.best_value), f"{name}, best rate {sw.best_value:g}", i, "-"))
    _loss_panel(ax1, curves, smooth)
    rate_sweep_axes(ax2, sweeps, labels={k: f"{k}, {'base rate η₀' if k.startswith('Adagrad') else 'rate η'}"
                                         for k in sweeps})
    ax2.set_xlabel("rate")
    ax2.axvline(nominal, color=COLORS[7], lw=0.8, ls=":")
    ax2.legend(fontsize=7, handlelength=3.5)
    fig.tight_layout()
    return fig


def stable_step_table(taus=(0, 1, 2, 4, 8, 16)):
    """The stale quadratic's largest stable step by staleness: from the roots, in closed form, and its large-tau
    approximation pi/(2 tau + 1) (:mod:`commlib.sgd.stale_quadratic`)."""
    rows = [(t, f"{stale_quadratic.largest_stable_step(t):.3f}", f"{stale_quadratic.stable_step_closed_form(t):.3f}",
             f"{np.pi / (2 * t + 1):.3f}") for t in taus]
    return markdown_table(["staleness τ (updates)", "largest stable ζ = ηλ (from the roots)",
                           "2 sin(π / (2(2τ + 1)))", "π / (2τ + 1)"], rows)


def random_staleness_table(limits):
    """The stale quadratic's largest stable step with a staleness that never varies (``n - 1`` updates) against the
    chapter's asynchronous protocol, whose staleness is random with the same mean: ``limits`` maps ``n`` to the
    latter (:func:`commlib.sgd.stale_quadratic.random_staleness_stable_step`)."""
    rows = [(n, n - 1, f"{stale_quadratic.stable_step_closed_form(n - 1):.3f}", f"{limit:.2f}")
            for n, limit in limits.items()]
    return markdown_table(["learners n", "mean staleness n − 1", "largest stable ζ, always n − 1 updates old",
                           "largest stable ζ, asynchronous SGD (random staleness)"], rows)


def _bare(rows):
    """``rows`` with the unit dropped from every entry: the tables name it once, in their headers.

    >>> _bare([("a", "0.55 ± 0.01 nats (C = 1)")])
    [('a', '0.55 ± 0.01 (C = 1)')]
    """
    return [tuple(c.replace(" nats", "") if isinstance(c, str) else c for c in row) for row in rows]


def stall_table(verdict):
    """The rules under stalls, each at its best (claim ``ch05.stalls``)."""
    return markdown_table(["with stalls", "best setting on its grid", "training loss (nats)",
                           "minus the best constant rate (nats)"], _bare(staleness_experiments.stall_rows(verdict)))


def lr_table(shared, tuned):
    """The learning-rate rules at the shared rate and each at its best, with the control (claims
    ``ch05.lr_rules_shared_rate`` and ``ch05.lr_rules``)."""
    return markdown_table(["contender", f"training loss at the shared rate {NOTES_RATE:g} (nats)",
                           "best setting on its grid", "training loss at its best (nats)"],
                          _bare(staleness_experiments.lr_rows(shared, tuned)))


def gupta_table(verdicts):
    """Gupta et al.'s rule (synchronous SGD's best rate over their mean staleness n) by number of learners, against a
    constant rate tuned on the asynchronous run (claims ``ch05.gupta_rule*``); the chapter gives the rest of
    :func:`commlib.experiments.sgd.staleness.gupta_rows` (the updates, the losses, the rate divided by n - 1) in its
    details."""
    rows = [(r[0], r[2], r[4], r[6], r[8]) for r in _bare(staleness_experiments.gupta_rows(verdicts))]
    return markdown_table(["learners n", "synchronous SGD's best rate", "Gupta et al.'s rate (divided by n)",
                           "constant rate tuned on the asynchronous run", "Gupta minus tuned (nats)"], rows)


def shared_step_table(rate, curvatures, tau, random_limit, tuned_rate):
    """The step ζ = ηλ_max that the shared ``rate`` and the ``tuned_rate`` make where the sharpest curvature is
    ``curvatures`` (a mapping: where on the path to its value), against the stale quadratic's limit for a gradient
    always ``tau`` updates old (:func:`commlib.sgd.stale_quadratic.stable_step_closed_form`) and the
    ``random_limit`` that random staleness allows.

    >>> print(shared_step_table(0.5, {"optimum": 0.2}, 15, 0.48, 0.05).data.splitlines()[-1])
    | optimum | 0.2 | 0.1 | 0.01 | 0.101 | 0.48 |
    """
    limit = stale_quadratic.stable_step_closed_form(tau)
    rows = [(where, f"{lam:.3g}", f"{rate * lam:.3g}", f"{tuned_rate * lam:.2g}", f"{limit:.3f}",
             f"{random_limit:.2f}") for where, lam in curvatures.items()]
    return markdown_table(["where", r"sharpest curvature $\lambda_{\max}$", f"step ζ at the shared rate {rate:g}",
                           f"step ζ at the tuned rate {tuned_rate:g}", f"limit, always {tau} updates old",
                           "limit, random staleness"], rows)


def _gain(x: float) -> str:
    """A noise gain to three significant figures, or what an infinite one means (a delay past its limit)."""
    return f"{x:.3g}" if np.isfinite(x) else "unbounded (past the limit)"


def _random_gain(row) -> str:
    """A row's random-staleness gain: the mean over its seeds with its spread where it has several, else the one."""
    return staleness_experiments.mean_spread_text(row["randoms"]) if "randoms" in row else _gain(row["random"])


def noise_gain_table(rows):
    """The noise gain under random staleness against a fixed delay of the same mean, one row per number of learners
    and curvature, each at its own rate (the rows of :func:`commlib.experiments.sgd.staleness.noise_gain_rows`); a
    fixed delay past its limit has no finite gain. The random-staleness gain is the mean over the rows' seeds with
    its spread (one standard deviation), quoted no finer than the spread.

    >>> row = {"workers": 16, "rate": 0.05, "where": "optimum", "step": 0.011, "reach": 0.16, "frac": 0.11,
    ...        "fixed": 1.18, "random": 1.16, "randoms": (1.15, 1.16, 1.17)}
    >>> print(noise_gain_table([row]).data.splitlines()[-1])
    | 16 | 0.05 | optimum | 0.011 | 0.16 | 0.11 | 1.18 | 1.16 ± 0.01 |
    """
    body = [(r["workers"], f"{r['rate']:g}", r["where"], f"{r['step']:.2g}", f"{r['reach']:.2g}", f"{r['frac']:.2g}",
             _gain(r["fixed"]), _random_gain(r)) for r in rows]
    return markdown_table(["learners n", "tuned rate", "curvature", "step ζ", "ζ (n − 1)",
                           "ζ over the limit, always n − 1 updates old", "noise gain, always n − 1 updates old",
                           "noise gain, random staleness (mean ± sd over seeds)"], body)


def same_reach_table(rows):
    """The noise gain at one step times the mean staleness, :math:`\\zeta (n - 1)`, over several numbers of learners:
    the rows of :func:`commlib.experiments.sgd.staleness.noise_gain_rows` with :math:`\\zeta (n - 1)` held fixed (a
    curvature of 1, so the rate is the step), which pull the learners and :math:`\\zeta (n - 1)` apart.

    >>> row = {"workers": 4, "rate": 0.23, "where": "same", "step": 0.23, "reach": 0.69, "frac": 0.66,
    ...        "fixed": 2.1, "random": 1.68, "randoms": (1.67, 1.68, 1.69)}
    >>> print(same_reach_table([row]).data.splitlines()[-1])
    | 0.69 | 4 | 0.23 | 2.1 | 1.68 ± 0.01 |
    """
    body = [(f"{r['reach']:.2g}", r["workers"], f"{r['step']:.2g}", _gain(r["fixed"]), _random_gain(r))
            for r in sorted(rows, key=lambda r: (r["reach"], r["workers"]))]
    return markdown_table(["ζ (n − 1), held fixed", "learners n", "step ζ", "noise gain, always n − 1 updates old",
                           "noise gain, random staleness (mean ± sd over seeds)"], body)


def carry_table(rows, gupta=None):
    """Each rule's best setting for 16 learners carried unchanged to 256 (claim ``ch05.carry_over``), the constant
    rate re-tuned there and, given its verdict, Gupta et al.'s rule re-applied there (``ch05.gupta_rule_n256``)."""
    rows = list(rows)
    if gupta is not None:
        g, c = gupta.best[staleness_experiments.GUPTA], gupta.best[staleness_experiments.TUNED]
        rate = staleness_experiments.gupta_rate(gupta.claim.shared, gupta.best[staleness_experiments.SYNC].config["lr"])
        rows.append(("Gupta et al.'s rule re-applied (synchronous SGD re-tuned, divided by n)", f"rate {rate:.3g}",
                     staleness_experiments._text(g, c)))
    return markdown_table(["with 256 learners", "setting", "training loss (nats)"], _bare(rows))


def downpour_table(shared, tuned):
    """Downpour SGD: plain SGD against per-shard Adagrad, at the shared rate and tuned, with eight replicas and with
    one (claims ``ch05.downpour_shared_rate`` and ``ch05.downpour``)."""
    return markdown_table(["", f"at the shared rate {NOTES_RATE:g}, 8 replicas", "tuned, 8 replicas",
                           "tuned, one replica (control)"], staleness_experiments.downpour_rows(shared, tuned))

"""Every calculator of the book, and the cases a careful reader would try on each (kernel and browser tests).

:func:`calculators` builds the twelve calculators as the chapters do; :func:`dropdown_states` lists
every combination of their dropdowns and boxes (a seeded sample where there are more than
:data:`MAX_STATES`), and :data:`OPTION_SETTINGS` the slider settings some options need;
:func:`edge_cases` the ends of every slider, and extreme, awkward and ambiguous entries for every
free box; :func:`problems` says what is wrong with one outcome.
"""

from __future__ import annotations

import itertools
import math
import random
import re

import ipywidgets as widgets

#: Above this many dropdown combinations a calculator is driven through a seeded sample of them.
MAX_STATES = 3000

#: What a reader might type in a number box: the ends of any range, and far beyond.
NUMBERS = (0, -1, 1e-300, 5e-324, 1e-3, 0.5, 1, 99.9, 100, 1e5, 1e7, 1e308, math.inf, -math.inf, math.nan)

#: What a reader might type in a text box, by what the box reads.
TEXTS = {
    "size": ("", "abc", "64", "1,5 MB", "1,000 MB", "1e18 PiB", "1 PB", "1.01 PB", "0 B", "-1 MB", "1 B",
             "1e-300 B", "0.5 B", "1.5 MB", "64 MiB", "1_000 kB", "nan MB", "inf GB"),
    "value": ("", "abc", "1,5 GB/s", "1e-300 GB/s", "1e18 PB/s", "0 B/s", "999 kB/s", "1 MB/s", "100 TB/s",
              "101 TB/s", "25 Gb/s", "10 GB/s", "-3 GB/s", "inf GB/s"),
    "where": ("", "host3:2, host3:2", "host0:1", "host9:1", "host0:5", "h1:1 h2:1", "host0:0", "host1:4, host2:4",
              "host0:4 host1:4 host2:4 host3:4 host4:4 host5:4 host6:4 host7:4", "3-2", "host1:1,host2:1"),
}


def _lab_calculator():
    from commlib.lab import fit
    from commlib.views import lab as lab_views

    sizes = tuple(2.0**k for k in range(10, 27))
    series = []
    for op, algorithm, label, steps in (("all_reduce", "ring", "all-reduce", 2), ("all_gather", "ring", "all-gather", 1)):
        times = tuple(steps * 20e-6 + steps * m / 2 / 10e9 for m in sizes)
        series.append(fit.Series(op, 2, sizes, times, algorithm=algorithm, label=label))
    models = [fit.fit_piecewise(s, min_points=3, regimes=3) for s in series]
    return lab_views.model_calculator(series, models, size="16 MiB")


def calculators() -> dict:
    """The book's twelve calculators, by chapter, with the views' defaults (chapter 8's on a synthetic fit)."""
    from commlib.views import collectives, network, parameter_servers, step, today
    from commlib.views.sgd import overlap, sync_async

    return {
        "ch00 all-reduce": step.allreduce_calculator(),
        "ch00 step": step.step_calculator(),
        "ch01 primitive": collectives.primitive_calculator(),
        "ch02 converter": collectives.bandwidth_converter(),
        "ch02 cluster": collectives.cluster_calculator(),
        "ch03 parameter server": parameter_servers.ps_calculator(),
        "ch04 sgd": sync_async.sgd_calculator().calculator,
        "ch05 overlap": overlap.overlap_calculator(),
        "ch06 placement": network.placement_calculator(),
        "ch07 chooser": today.chooser_calculator(),
        "ch07 sharding": today.sharding_calculator(),
        "ch08 lab": _lab_calculator(),
    }


#: Settings of a calculator's sliders under which options apply that its default settings rule out, by
#: calculator: before an option counts as failing with every other choice, it is tried under these too.
#: The cluster calculator times most algorithms on one host (h = 1) or one GPU per host (h = n) only.
OPTION_SETTINGS = {
    "ch02 cluster": lambda values: ({"hosts": 1}, {"hosts": values["n"]}),
    # NVLink presets refuse more ranks than one NVLink domain holds (8 GPUs for several generations)
    "ch00 step": lambda values: ({"n": 8},),
    "ch05 overlap": lambda values: ({"n": 8},),
}


def choice_options(calc) -> dict[str, list]:
    """Every dropdown's full list of values, and every tick box's two."""
    out = {name: [v for _, v in pairs] for name, pairs in calc.full_options.items()}
    out.update({name: [False, True] for name, c in calc.controls.items() if isinstance(c, widgets.Checkbox)})
    return out


def dropdown_states(calc, limit: int = MAX_STATES, seed: int = 0) -> list[dict]:
    """Every combination of the dropdowns and boxes, or a seeded sample of ``limit`` of them."""
    options = choice_options(calc)
    names = list(options)
    total = math.prod(len(v) for v in options.values())
    if total <= limit:
        return [dict(zip(names, combo)) for combo in itertools.product(*options.values())]
    rng = random.Random(seed)
    return [{name: rng.choice(options[name]) for name in names} for _ in range(limit)]


def edge_cases(calc) -> list[dict]:
    """One-control changes from the defaults: each slider's ends and a few values inside, awkward numbers and texts in each box."""
    cases: list[dict] = []
    for name, control in calc.controls.items():
        if isinstance(control, widgets.IntSlider):
            # the ends, and inside: the smallest values, a prime, a non-square and a square
            inside = [v for v in (control.min + 1, control.min + 2, 7, 8, 12, 16) if control.min < v < control.max]
            cases += [{name: control.min}, {name: control.max}] + [{name: v} for v in inside]
        elif isinstance(control, widgets.FloatText):
            cases += [{name: float(v)} for v in NUMBERS]
        elif isinstance(control, widgets.Text):
            cases += [{name: v} for v in TEXTS[name]]
    return cases


#: Parameter names of the model layer that no control shows (a grid, a chunk count, a keyword with "_").
_INTERNAL = re.compile(r"\b(grid|chunks|rails|links_per_rank|\w+_\w+ must)\b")
_WORD = re.compile(r"(?<![a-z])(inf|nan|infx)(?![a-z])")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_PERCENT = re.compile(r"(-?\d[\d,]*(?:\.\d+)?) %")

#: The most digits before the decimal point a result may print (a model's 1,557,611,200 parameters).
MAX_DIGITS = 10


def problems(calc) -> list[str]:
    """What is wrong with what ``calc`` shows now: impossible numbers, or an error that does not open with a control's label."""
    found = []
    labels = [c.description for c in calc.controls.values()]
    if calc.error is not None:
        if not any(calc.error.startswith(label) for label in labels):
            found.append(f"error does not open with a control the reader can see: {calc.error!r}")
        if _INTERNAL.search(calc.error):
            found.append(f"error names a parameter the reader cannot see: {calc.error!r}")
        if "Traceback" in calc.error:
            found.append(f"a traceback: {calc.error!r}")
        return found
    for label, value in calc.results.items():
        text = str(value)
        if _WORD.search(text.lower()):
            found.append(f"{label}: {text!r} (inf or nan)")
        for number in _NUMBER.findall(text):
            whole = number.split(".")[0].replace(",", "")
            if len(whole) > MAX_DIGITS:
                found.append(f"{label}: {text!r} ({len(whole)} digits)")
        for pct in _PERCENT.findall(text):
            if not 0 <= float(pct.replace(",", "")) <= 100:
                found.append(f"{label}: {text!r} (a share beyond 100 %)")
    return found


def raw_values(calc) -> dict:
    """The controls' values as the page holds them (a dropdown's index into its full options)."""
    out = {}
    for name, control in calc.controls.items():
        if name in calc.full_options:
            out[name] = [v for _, v in calc.full_options[name]].index(control.value)
        else:
            out[name] = control.value
    return out

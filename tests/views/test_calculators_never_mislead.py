"""Every calculator, driven through every dropdown combination and the edges of every slider and box.

For each of the book's twelve calculators (``tests/calculator_cases.py``): every combination of its
dropdowns and tick boxes (a seeded sample of 3,000 where there are more), then each slider at its
ends and each free box given extreme, awkward and ambiguous entries, at the defaults and on a few
dropdown combinations. After each change the calculator must show no inf, nan or "infx", no number
with more digits than any physical quantity it shows, no share above 100 % (a ratio to what a link
can carry included), and an error must name a control the reader can see. No option a dropdown
offers may fail for every combination of the others (under the slider settings it needs, where the
defaults rule it out: ``OPTION_SETTINGS``), and the page's Python entry point
(``run_spec``, ``run_choices``) must give exactly what the kernel shows.
"""

from __future__ import annotations

import json
import random

import ipywidgets as widgets
import pytest
from calculator_cases import (
    OPTION_SETTINGS,
    calculators,
    choice_options,
    dropdown_states,
    edge_cases,
    problems,
    raw_values,
)

from commlib import hardware
from commlib.views.results import run_choices, run_spec

NAMES = list(calculators())


@pytest.fixture(scope="module")
def built():
    return calculators()


def _page_agrees(calc) -> str | None:
    """None when the page's entry points, given what the page holds, show what the kernel shows."""
    spec = calc._gotw_spec
    raw = raw_values(calc)
    if json.loads(spec).get("choices"):
        settled = json.loads(run_choices(spec, json.dumps(raw)))["values"]
        moved = {k: v for k, v in settled.items() if raw[k] != v}
        if moved:
            return f"the page would move {moved} where the kernel keeps {raw}"
    if not json.loads(spec)["live"]:
        return None
    shown = run_spec(spec, json.dumps(raw))
    return None if shown == calc.output.value else f"page {shown!r} != kernel {calc.output.value!r}"


@pytest.mark.parametrize("name", NAMES)
def test_every_dropdown_combination_works_and_shows_only_possible_numbers(built, name):
    calc = built[name]
    defaults = calc.values()
    options = choice_options(calc)
    seen, worked, bad = set(), set(), []
    states = dropdown_states(calc)
    for state in states:
        calc.set(**state)
        shown = {k: calc.controls[k].value for k in options}
        seen.update(shown.items())
        if calc.error is None:
            worked.update(shown.items())
        bad += [f"{state}: {p}" for p in problems(calc)]
        disagreement = _page_agrees(calc)
        if disagreement:
            bad.append(f"{state}: {disagreement}")
    # an option the default sliders rule out must work under the settings it needs (OPTION_SETTINGS)
    for settings in OPTION_SETTINGS.get(name, lambda values: ())(defaults):
        for control, value in sorted(seen - worked, key=str):
            for state in [s for s in states if s[control] == value][:20]:
                calc.set(**defaults)
                calc.set(**state, **settings)
                bad += [f"{state} {settings}: {p}" for p in problems(calc)]
                if calc.error is None:
                    worked.add((control, value))
                    break
    calc.set(**defaults)
    assert not bad, f"{name}: {len(bad)} problems, e.g. {bad[:5]}"
    always_fails = sorted(seen - worked, key=str)
    assert not always_fails, f"{name}: options offered that fail with every other choice: {always_fails}"
    assert len(states) >= min(len(seen), 2)


@pytest.mark.parametrize("name", NAMES)
def test_edges_of_every_slider_and_box_are_shown_or_refused_by_name(built, name):
    calc = built[name]
    defaults = calc.values()
    rng = random.Random(1)
    states = [{}] + rng.sample(dropdown_states(calc), min(4, len(dropdown_states(calc))))
    bad = []
    for state in states:
        for case in edge_cases(calc):
            calc.set(**defaults)
            calc.set(**state)
            calc.set(**case)
            bad += [f"{state} {case}: {p}" for p in problems(calc)]
            disagreement = _page_agrees(calc)
            if disagreement:
                bad.append(f"{state} {case}: {disagreement}")
    calc.set(**defaults)
    assert not bad, f"{name}: {len(bad)} problems, e.g. {bad[:5]}"


@pytest.mark.parametrize("name", NAMES)
def test_every_option_at_every_slider_setting_shows_results_or_an_error_that_opens_with_a_control(built, name):
    """Each option of each dropdown, the others at their defaults, under each slider setting of edge_cases:
    whatever error a reader can reach this way opens with the label of a control on screen and names no
    parameter of the model that no control shows (a torus's grid, say)."""
    calc = built[name]
    defaults = calc.values()
    sliders = [case for case in edge_cases(calc) if isinstance(calc.controls[next(iter(case))], widgets.IntSlider)]
    bad = []
    for control, values in choice_options(calc).items():
        for value in values:
            for case in [{}] + sliders:
                calc.set(**defaults)
                calc.set(**{control: value}, **case)
                bad += [f"{control}={value!r} {case}: {p}" for p in problems(calc)]
    calc.set(**defaults)
    assert not bad, f"{name}: {len(bad)} problems, e.g. {bad[:5]}"


@pytest.mark.parametrize("name", NAMES)
def test_dropdown_labels_are_unique(built, name):
    """The page finds the options a dropdown offers by their labels."""
    calc = built[name]
    for control, pairs in calc.full_options.items():
        labels = [label for label, _ in pairs]
        assert len(labels) == len(set(labels)), f"{name}: {control} repeats a label"


def test_the_primitive_calculator_offers_each_collective_its_own_algorithms(built):
    from commlib.collectives import calculators as model

    calc = built["ch01 primitive"]
    for primitive, op in model.PRIMITIVE_OPS.items():
        calc.set(primitive=primitive)
        offered = [v for _, v in calc.controls["algorithm"].options]
        assert sorted(offered) == sorted(model.PRIMITIVE_ALGORITHMS[op])
        for algorithm in offered:
            assert calc.set(algorithm=algorithm).error is None, (primitive, algorithm, calc.error)
    calc.set(primitive="all-gather", algorithm="ring")


@pytest.mark.parametrize("name, control, entry, words", [
    ("ch02 converter", "value", "1,5 GB/s", "comma is ambiguous"),
    ("ch01 primitive", "size", "1,5 MB", "comma is ambiguous"),
    ("ch07 chooser", "size", "1,000 MB", "comma is ambiguous"),
    ("ch06 placement", "where", "host3:2, host3:2", "names host 3 twice"),
    ("ch01 primitive", "size", "1e18 PiB", "between 8 B (a byte for each of the 8 ranks) and 1 PB"),
    ("ch02 converter", "value", "1e-300 GB/s", "between 1 MB/s and 100 TB/s"),
    ("ch02 converter", "value", "1 000 GB/s", "a space between digits is not read as a thousands separator"),
    ("ch01 primitive", "size", "1\u2009000 MB", "a thin space between digits"),
])
def test_misread_entries_are_refused_with_a_message(built, name, control, entry, words):
    calc = built[name]
    default = calc.values()[control]
    calc.set(**{control: entry})
    try:
        assert calc.error is not None and words in calc.error, calc.error
        assert calc.error.startswith(calc.controls[control].description), calc.error
    finally:
        calc.set(**{control: default})


@pytest.mark.parametrize("name, control, value, words", [
    ("ch00 all-reduce", "memory_gbs", 5e-324, "memory (GB/s) must lie between 0.001 and 100000 GB/s"),
    ("ch05 overlap", "tflops", 1e308, "achieved TFLOP/s must lie between 0.001 and 10000 TFLOP/s"),
    ("ch05 overlap", "bucket_mib", -1.0, "bucket cap (MiB) must lie between 0 and 100000 MiB, got -1 MiB"),
    ("ch04 sgd", "slowdown", 1e308, "straggler factor must lie between 1 and 100, got 1e+308"),
    ("ch02 cluster", "t_compute_ms", 0.0, "compute (ms/step) must lie between 0.001 and 1000000 ms"),
])
def test_errors_name_the_control_in_its_units(built, name, control, value, words):
    calc = built[name]
    default = calc.values()[control]
    calc.set(**{control: value})
    try:
        assert calc.error is not None and calc.error.startswith(words), calc.error
    finally:
        calc.set(**{control: default})


def test_one_worker_or_rank_says_there_is_nothing_to_compare(built):
    ps = built["ch03 parameter server"]
    ps.set(n=1)
    assert ps.results["faster"].startswith("nothing to compare")
    ps.set(n=8)
    placement = built["ch06 placement"]
    placement.set(where="host0:1")
    assert placement.results["scheme"].startswith("none: one worker")
    placement.set(where="host3:2, host1:2")


def test_the_overlap_calculator_refuses_more_ranks_than_an_nvlink_domain_holds(built):
    """Finding M4: 1,024 ranks over NVLink 3.0 would show a share of a link no such domain has."""
    calc = built["ch05 overlap"]
    try:
        for link in ("nvlink3",):
            calc.set(link=link, n=1024)
            most = hardware.link(link).max_ranks
            assert calc.error is not None and calc.error.startswith(f"ranks n must be at most {most}"), calc.error
        calc.set(link="nvlink3", n=8)
        assert calc.error is None
        assert "nvlink1" not in [v for _, v in calc.controls["link"].options], "no switch joins NVLink 1.0"
    finally:
        calc.set(link="eth_25g", n=16)


def _size_boxes(built):
    """Every calculator's message-size box: (calculator name, control name)."""
    return [(name, control) for name, calc in built.items() for control, widget in calc.controls.items()
            if isinstance(widget, widgets.Text) and control == "size"]


@pytest.mark.parametrize("entry", ["0.5 B", "1e-300 B", "0.3 MiB", "1e18 PiB", "-1 MB"])
def test_every_size_box_states_one_range_and_refuses_the_same_entries(built, entry):
    """One physical range for a message size (units.SIZE_RANGE), used by every calculator's size box, named there;
    where the collective takes no fewer than n bytes (the primitive calculator), from n bytes."""
    import re

    from commlib.units import SIZE_WORDS

    boxes = _size_boxes(built)
    assert {name for name, _ in boxes} >= {"ch01 primitive", "ch07 chooser", "ch08 lab"}, boxes
    for name, control in boxes:
        calc = built[name]
        default = calc.values()[control]
        label = calc.controls[control].description
        calc.set(**{control: entry})
        try:
            assert calc.error is not None, (name, entry, calc.results)
            least = re.search(r"between (\d+) B \(a byte for each of the (\d+) ranks\) and 1 PB", calc.error)
            assert calc.error.startswith(label) and (SIZE_WORDS in calc.error or least), (name, calc.error)
            assert not least or least.group(1) == least.group(2) == str(calc.values()["n"]), (name, calc.error)
            assert repr(entry) in calc.error, (name, calc.error)
        finally:
            calc.set(**{control: default})


@pytest.mark.parametrize("entry", ["1 B", "1.1 kB", "64 MiB", "0 B", "1 PB"])
def test_every_size_box_takes_whole_bytes_inside_the_range(built, entry):
    from commlib.units import SIZE_WORDS

    for name, control in _size_boxes(built):
        calc = built[name]
        default = calc.values()[control]
        calc.set(**{control: entry})
        try:
            # inside the range: shown, or refused for what the collective needs (M at least n bytes), not the range
            assert calc.error is None or SIZE_WORDS not in calc.error, (name, entry, calc.error)
        finally:
            calc.set(**{control: default})


@pytest.mark.parametrize("n, hosts", [(16, 2), (8, 4), (16, 1), (16, 16)])
def test_the_cluster_calculators_cards_are_offered_only_where_they_change_the_result(built, n, hosts):
    """Chapter 2: over the algorithm menu, the network cards dropdown either changes the results or offers one
    value and the results say in one line why (a flat ring crosses one card per host)."""
    calc = built["ch02 cluster"]
    try:
        calc.set(n=n, hosts=hosts)
        for algorithm in [v for _, v in calc.controls["algorithm"].options]:
            calc.set(algorithm=algorithm)
            offered = [v for _, v in calc.controls["nics_per_host"].options]
            shown = {}
            for cards in offered:
                calc.set(nics_per_host=cards)
                assert calc.error is None, (algorithm, cards, calc.error)
                shown[cards] = json.dumps(calc.results, sort_keys=True)
            if len(offered) > 1:
                assert len(set(shown.values())) > 1, f"{algorithm} on {hosts} hosts: the cards {offered} change nothing"
                assert "network cards c" not in calc.results
            else:
                assert calc.results["network cards c"].startswith("not used: "), (algorithm, calc.results)
            assert not calc.error and (_page_agrees(calc) is None), _page_agrees(calc)
    finally:
        calc.set(n=16, hosts=2, algorithm="ring", nics_per_host=1)

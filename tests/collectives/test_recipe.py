"""CONTRIBUTING's worked example is the real recipe: one module and one registry line add an algorithm.

In a temporary copy of the package the test writes the modules exactly as CONTRIBUTING.md shows them
(a multi-link one and a flat one), adds each one's registry line, touches nothing else, and then runs
the registry-wide test files whole and builds the calculators' option lists, checking that the new
algorithms are found everywhere with correct times.
"""

import difflib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The modules CONTRIBUTING.md's worked example adds: name -> the marker before its python block.
RECIPES = {"two_way_ring": "<!-- recipe:", "halves_ring": "<!-- recipe-flat:"}


def recipe_module(name: str = "two_way_ring") -> str:
    """The module CONTRIBUTING.md's worked example shows (the python block after its marker)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    after = text.split(RECIPES[name], 1)[1]
    block = re.search(r"```python\n(.*?)\n\s*```", after, re.S).group(1)
    return "\n".join(line[3:] if line.startswith("   ") else line.strip() for line in block.split("\n")) + "\n"


@pytest.mark.parametrize("name", list(RECIPES))
def test_the_recipe_block_is_a_module_with_a_record(name):
    source = recipe_module(name)
    compile(source, f"{name}.py", "exec")
    assert "ALGORITHM = Algorithm(" in source and f'name="{name}"' in source


@pytest.fixture(scope="module")
def copy_with_recipe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recipe")
    shutil.copytree(ROOT / "commlib", tmp / "commlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", tmp / "tests", ignore=shutil.ignore_patterns("__pycache__", "build", "browser",
                                                                                   "frontends"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    algs = tmp / "commlib" / "collectives" / "algorithms"
    init = algs / "__init__.py"
    text = init.read_text(encoding="utf-8")
    for name in RECIPES:
        (algs / f"{name}.py").write_text(recipe_module(name), encoding="utf-8")
        # the one registry line: the module's name on a line of its own at the end of _MODULES
        text = re.sub(r"(_MODULES = \((?:\n    \"\w+\",)*)\n\)", rf'\1\n    "{name}",\n)', text, count=1)
    init.write_text(text, encoding="utf-8")
    return tmp


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=tmp, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tmp), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
                               "PYTHONHASHSEED": "0"})


def test_only_the_module_and_its_registry_line_differ(copy_with_recipe):
    changed = []
    for path in sorted((copy_with_recipe / "commlib").rglob("*.py")):
        original = ROOT / path.relative_to(copy_with_recipe)
        if not original.exists() or original.read_bytes() != path.read_bytes():
            changed.append(path.relative_to(copy_with_recipe).as_posix())
    assert changed == ["commlib/collectives/algorithms/__init__.py", "commlib/collectives/algorithms/halves_ring.py",
                       "commlib/collectives/algorithms/two_way_ring.py"]
    diff = [line for line in difflib.ndiff((ROOT / changed[0]).read_text().splitlines(),
                                           (copy_with_recipe / changed[0]).read_text().splitlines())
            if line[:1] in "+-"]
    for name in RECIPES:       # one added line each, nothing else changed
        assert [line for line in diff if name in line] == [f'+     "{name}",'], diff
    assert len(diff) == len(RECIPES), diff


#: The registry-wide test files, run whole in the copy: every test that reads the registry
#: (ALLREDUCE, figure_algorithms, one_port_allreduces) and that a new algorithm could turn red.
REGISTRY_WIDE = ["tests/collectives/test_algorithms.py", "tests/collectives/test_simulate_collectives.py",
                 "tests/collectives/test_compare.py", "tests/collectives/test_cost.py",
                 "tests/collectives/test_calculators.py", "tests/collectives/test_primitive_calculator_buffer.py",
                 "tests/views/test_views_collectives.py", "tests/test_layers.py"]

#: The tests of chapter 2's claims that iterate the registry (the rest of that file runs no algorithm by list).
REGISTRY_CLAIMS = ("tests/collectives/test_claims_collectives.py", "extra_summing_machines or off_powers_of_two")

#: The modules whose doctests run in the copy, as ``make unit`` runs them: the whole collectives
#: package (the registry's own doctests included) and chapter 2's figures.
REGISTRY_DOCTESTS = ["commlib/collectives", "commlib/views/collectives.py", "commlib/cost.py"]


def test_the_registry_wide_tests_pass_with_it(copy_with_recipe):
    out = run(copy_with_recipe, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-x", *REGISTRY_WIDE)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert all(f"test_closed_form_equals_the_executed_trace[1-{name}] PASSED" in out.stdout for name in RECIPES)


def test_the_registry_claims_tests_pass_with_it(copy_with_recipe):
    path, selected = REGISTRY_CLAIMS
    out = run(copy_with_recipe, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", path, "-k", selected)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " deselected" in out.stdout


def test_the_doctests_pass_with_it(copy_with_recipe):
    out = run(copy_with_recipe, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules",
              *REGISTRY_DOCTESTS)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    ran = re.search(r"(\d+) passed", out.stdout)
    assert ran and int(ran.group(1)) >= 10, out.stdout[-1000:]      # the doctests were found and run


def test_chapter_1_and_2_calculators_never_mislead_with_it(copy_with_recipe):
    """Every dropdown combination and every entry's edges of the two calculators that offer all-reduces."""
    out = run(copy_with_recipe, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
              "tests/views/test_calculators_never_mislead.py", "-k", "ch01 or ch02 or primitive_calculator")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]


PROBE = r"""
import json
from commlib import cost, hardware
from commlib.collectives import algorithms, calculators, compare
from commlib.collectives import simulate as collectives
from commlib.views import collectives as views
import numpy as np

link = hardware.link("eth_100g")
calc = views.cluster_calculator()
options = [v for _, v in calc.full_options["algorithm"]]
arrays = [np.arange(64, dtype=np.int64) * (r + 1) for r in range(8)]
res, trace = collectives.allreduce(arrays, "two_way_ring")
out = {
    "registry": "two_way_ring" in algorithms.ALLREDUCE,
    "flat": "two_way_ring" in cost.ALLREDUCE_ALGORITHMS,
    "figure": "two_way_ring" in views.figure_algorithms(8),
    "cluster_option": "two_way_ring" in options and "two_way_ring" in calculators.cluster_choices(8, 8)["algorithm"],
    "correct": all(np.array_equal(r, sum(arrays)) for r in res),
    "own_links": cost.allreduce_time(1e8, 8, link.bandwidth, 0.0, "two_way_ring")
                 / cost.allreduce_time(1e8, 8, link.bandwidth, 0.0, "ring"),
    "one_port": [compare.allreduce_seconds("two_way_ring", 1e8, n, link.bandwidth, 0.0, links_per_rank=1)
                 / compare.allreduce_seconds("ring", 1e8, n, link.bandwidth, 0.0) for n in (2, 3, 8)],
    "own_links_2": cost.allreduce_time(1e8, 2, link.bandwidth, 0.0, "two_way_ring")
                   / cost.allreduce_time(1e8, 2, link.bandwidth, 0.0, "ring"),
    "calculator": calculators.cluster_results("resnet50", "fp16", 8, 8, "eth_100g", "eth_100g", "two_way_ring", 100, 90),
    "ring": calculators.cluster_results("resnet50", "fp16", 8, 8, "eth_100g", "eth_100g", "ring", 100, 90),
    "table": "two rings, both ways (two links per rank)" in views.coefficients_table(16).data,
    "extra_ms": 1e3 * 2 * 7 * link.latency,   # a second message a step through the one port: 2(n-1) more start-ups
    # the flat one: a one-port rival everywhere, the ring's bytes with twice its start-ups
    "halves_ring": {
        "flat": "halves_ring" in cost.ALLREDUCE_ALGORITHMS,
        "figure": "halves_ring" in views.figure_algorithms(8),
        "primitive_option": "halves_ring" in calculators.primitive_choices("all-reduce", n=8)["algorithm"],
        "cluster_option": "halves_ring" in options and "halves_ring" in calculators.cluster_choices(8, 8)["algorithm"],
        "extra": [compare.allreduce_seconds("halves_ring", 1e8, n, link.bandwidth, link.latency)
                  - compare.allreduce_seconds("ring", 1e8, n, link.bandwidth, link.latency) for n in (2, 3, 8)],
        "latency": link.latency,
        "primitive_steps": calculators.primitive_results("all-reduce", "halves_ring", 8, "64 MiB", "eth_100g")[
            "steps on the critical path (alpha count)"],
        "calculator": calculators.cluster_results("resnet50", "fp16", 8, 8, "eth_100g", "eth_100g", "halves_ring",
                                                  100, 90),
        "table": "ring, one half after the other" in views.coefficients_table(16).data,
    },
}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe(copy_with_recipe) -> dict:
    """What the copy's registry, costs, simulation, figures and calculators say of the new algorithms."""
    import json

    out = run(copy_with_recipe, "-c", PROBE)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_it_is_found_everywhere_with_correct_times(probe):
    r = probe
    assert r["registry"] and r["correct"] and r["cluster_option"] and r["table"]
    assert not r["flat"] and not r["figure"]        # it needs two links per rank: not a one-port rival
    assert r["own_links"] == pytest.approx(0.5)     # on its own links: half the ring's bandwidth term
    assert r["one_port"] == pytest.approx([1.0, 1.0, 1.0])   # behind a switch: the two halves share the port
    assert r["own_links_2"] == pytest.approx(1.0)   # two ranks have one neighbour: one link, the ring's time
    # behind a switch: the ring's bytes, and each of the two messages a step pays its start-up
    ms = [float(r[k]["time of one all-reduce"].split()[0]) for k in ("calculator", "ring")]
    assert ms[0] == pytest.approx(ms[1] + r["extra_ms"], abs=1e-3)
    assert float(r["calculator"]["busbw / busbw its links allow"].split()[0]) <= 100.0


def test_the_flat_one_is_a_one_port_rival_with_correct_times(probe):
    r = probe["halves_ring"]
    assert r["flat"] and r["figure"] and r["primitive_option"] and r["cluster_option"] and r["table"]
    # the ring's bytes with 2(n - 1) more start-ups
    assert r["extra"] == pytest.approx([2 * (n - 1) * r["latency"] for n in (2, 3, 8)], rel=1e-9)
    assert r["primitive_steps"] == "28"
    ms = float(r["calculator"]["time of one all-reduce"].split()[0])
    assert ms > 0 and float(r["calculator"]["busbw / busbw its links allow"].split()[0]) <= 100.0

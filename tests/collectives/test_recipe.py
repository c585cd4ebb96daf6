"""CONTRIBUTING's worked example is the real recipe: one module and one registry line add an algorithm.

In a temporary copy of the package the test writes the module exactly as CONTRIBUTING.md shows it,
adds its registry line, touches nothing else, and then runs the registry-wide tests and builds the
calculators' option lists, checking that the new algorithm is found everywhere with correct times.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def recipe_module() -> str:
    """The module CONTRIBUTING.md's worked example shows (its one python block after the marker)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    after = text.split("<!-- recipe:", 1)[1]
    block = re.search(r"```python\n(.*?)\n\s*```", after, re.S).group(1)
    return "\n".join(line[3:] if line.startswith("   ") else line.strip() for line in block.split("\n")) + "\n"


def test_the_recipe_block_is_a_module_with_a_record():
    source = recipe_module()
    compile(source, "two_way_ring.py", "exec")
    assert "ALGORITHM = Algorithm(" in source and 'name="two_way_ring"' in source


@pytest.fixture(scope="module")
def copy_with_recipe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recipe")
    shutil.copytree(ROOT / "commlib", tmp / "commlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", tmp / "tests", ignore=shutil.ignore_patterns("__pycache__", "build", "browser",
                                                                                   "frontends"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    algs = tmp / "commlib" / "collectives" / "algorithms"
    (algs / "two_way_ring.py").write_text(recipe_module(), encoding="utf-8")
    init = algs / "__init__.py"
    text = init.read_text(encoding="utf-8")
    # the one registry line: the module in _MODULES (and in the import list above it)
    text = text.replace("    tree,\n)", "    tree,\n    two_way_ring,\n)", 1)
    text = re.sub(r"(_MODULES = \([^)]*)\)", r"\1, two_way_ring)", text, count=1)
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
    assert changed == ["commlib/collectives/algorithms/__init__.py", "commlib/collectives/algorithms/two_way_ring.py"]
    diff = set((copy_with_recipe / changed[0]).read_text().split("\n")) ^ set((ROOT / changed[0]).read_text().split("\n"))
    assert len([line for line in diff if "two_way_ring" in line]) <= 2


def test_the_registry_wide_tests_pass_with_it(copy_with_recipe):
    out = run(copy_with_recipe, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/collectives/test_algorithms.py",
              "tests/collectives/test_simulate_collectives.py", "tests/test_layers.py", "-k", "two_way_ring or layers or "
              "one_source or registry")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "two_way_ring" in run(copy_with_recipe, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                                 "tests/collectives/test_algorithms.py").stdout


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
}
print(json.dumps(out))
"""


def test_it_is_found_everywhere_with_correct_times(copy_with_recipe):
    import json

    out = run(copy_with_recipe, "-c", PROBE)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["registry"] and r["correct"] and r["cluster_option"] and r["table"]
    assert not r["flat"] and not r["figure"]        # it needs two links per rank: not a one-port rival
    assert r["own_links"] == pytest.approx(0.5)     # on its own links: half the ring's bandwidth term
    assert r["one_port"] == pytest.approx([1.0, 1.0, 1.0])   # behind a switch: the two halves share the port
    assert r["own_links_2"] == pytest.approx(1.0)   # two ranks have one neighbour: one link, the ring's time
    # behind a switch: the ring's bytes, and each of the two messages a step pays its start-up
    ms = [float(r[k]["time of one all-reduce"].split()[0]) for k in ("calculator", "ring")]
    assert ms[0] == pytest.approx(ms[1] + r["extra_ms"], abs=1e-3)
    assert float(r["calculator"]["busbw / what its links carry"].split()[0]) <= 100.0

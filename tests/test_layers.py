"""The model layer never imports the view layer's libraries."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "commlib"
VIEW_LIBS = {"ipywidgets", "matplotlib", "IPython"}
MODEL_FILES = sorted(p for p in ROOT.rglob("*.py") if "views" not in p.parts)


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_model_module_imports_no_view_library(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and node.module:
            assert not node.module.startswith("views"), f"{path} imports the view layer"
        for name in names:
            assert name.split(".")[0] not in VIEW_LIBS, f"{path} imports {name}"


# The model layer's functions that run an algorithm or a simulation (moving real arrays, replaying
# events, training). Figures, animations and tables take their results as input; a view never calls
# them. Calculators call the model's ``*_results`` functions, which is what those are for.
SIMULATIONS = {
    "collectives": {"reduce_order_demo", "reduce", "broadcast", "gather", "scatter", "all_gather", "reduce_scatter",
                    "all_to_all", "allreduce"},
    "compare": {"reduce_step_counts", "trace_vs_formula", "buffer_sizes"},
    "topology": {"map_flows", "map_trace", "allreduce_trace", "staged_exchange", "sharing_comparison",
                 "intra_host_reduction", "gallery_runs", "ring_check", "hierarchy_runs"},
    "ps": {"ps_round", "byteps_round", "server_and_ring_volumes", "sharding_curves", "demo_round", "traffic_check"},
    "sgd": {"simulate", "schedule", "replay", "monte_carlo_runtime_ratio"},
    "sgd_simpy": {"k_async", "k_batch_async", "k_sync"},
    "training": {"train", "make_problem"},
    "overlap": {"schedule", "overlap_timeline", "bucket_sweep"},
    "compression": {"train_compressed", "best_over_grid"},
    "localsgd": {"run", "best_over_grid"},
    "innetwork": {"switch_allreduce", "link_loads"},
    "moe": {"dispatch", "expert_loads"},
    "zero": {"zero_step"},
}
VIEW_FILES = sorted((ROOT / "views").glob("*.py"))


def _model_calls(tree: ast.AST) -> set[str]:
    """``module.function`` for every call a view makes into the model layer (``from .. import x`` names)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 2:
            for alias in node.names:
                names[alias.asname or alias.name] = ".".join(filter(None, [node.module, alias.name]))
    calls = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in names:
            calls.add(f"{names[f.value.id]}.{f.attr}")
        elif isinstance(f, ast.Name) and f.id in names:
            calls.add(names[f.id])
    return calls


def _experiment_runs() -> set[str]:
    """``experiments.module.function`` for every experiment function that runs something.

    A function runs something if it calls a function of :data:`SIMULATIONS` or another such
    function of its module; summaries, labels and the calculators' ``*_results`` do not.
    """
    runs = set()
    for path in sorted((ROOT / "experiments").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        called = {}
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                called[fn.name] = {n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id
                                   for n in ast.walk(fn) if isinstance(n, ast.Call)
                                   and isinstance(n.func, (ast.Attribute, ast.Name))}
        simulators = set().union(*SIMULATIONS.values())
        mine = {name for name, calls in called.items() if calls & simulators}
        while True:
            more = {name for name, calls in called.items() if calls & mine} - mine
            if not more:
                break
            mine |= more
        runs |= {f"experiments.{path.stem}.{name}" for name in mine if not name.endswith("_results")}
    return runs


EXPERIMENT_RUNS = _experiment_runs()


def _is_simulation(call: str) -> bool:
    module, _, function = call.rpartition(".")
    return call in EXPERIMENT_RUNS or function in SIMULATIONS.get(module, set())


@pytest.mark.parametrize("path", VIEW_FILES, ids=lambda p: p.name)
def test_views_run_no_experiment(path):
    calls = _model_calls(ast.parse(path.read_text(encoding="utf-8")))
    if path.name in {"collectives.py", "sync_async.py", "overlap.py", "basics.py"}:
        assert calls, f"{path.name}: found no call into the model layer (is the scan still right?)"
    runs = sorted(c for c in calls if _is_simulation(c))
    assert not runs, f"{path.name} runs {', '.join(runs)}: move the run to the model layer and pass its result in"


def test_experiments_that_run_are_recognised():
    assert {"experiments.collectives.ring_run", "experiments.staleness.lr_rule_study"} <= EXPERIMENT_RUNS
    assert "experiments.collectives.contributors" not in EXPERIMENT_RUNS


def test_the_scan_sees_a_simulation_call():
    tree = ast.parse("from .. import sgd\nfrom ..experiments import sync_async\n"
                     "def f():\n    sgd.simulate('async', 4)\n    sync_async.law_time_runs()\n"
                     "    sync_async.sgd_results()\n")
    calls = _model_calls(tree)
    assert calls == {"sgd.simulate", "experiments.sync_async.law_time_runs", "experiments.sync_async.sgd_results"}
    assert [c for c in sorted(calls) if _is_simulation(c)] == ["experiments.sync_async.law_time_runs", "sgd.simulate"]
    assert not _is_simulation("experiments.sync_async.sgd_results")

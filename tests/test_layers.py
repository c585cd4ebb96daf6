"""The layers: ground -> subjects -> formula sheet and self-checks -> experiments -> views -> notebooks,
no import cycle, no import up the layers (CONTRIBUTING.md's layout).

The model layer never imports the view layer's libraries, and a view runs no experiment.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "commlib"
VIEW_LIBS = {"ipywidgets", "matplotlib", "IPython"}
MODEL_FILES = sorted(p for p in ROOT.rglob("*.py") if "views" not in p.parts)


def _module_name(path: Path) -> str:
    parts = ("commlib",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imports(path: Path, module_level_only: bool = False) -> dict[str, str]:
    """``{local name: absolute commlib module or object}`` for every ``from ... import`` of commlib."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    nodes = tree.body if module_level_only else ast.walk(tree)
    found = {}
    for node in nodes:
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("commlib"):
            continue
        for alias in node.names:
            full = f"{target}.{alias.name}"
            found[alias.asname or alias.name] = full
    return found


def _module_deps(path: Path, module_level_only: bool = False) -> set[str]:
    deps = set()
    for full in _imports(path, module_level_only).values():
        while full not in MODULES and "." in full:
            full = full.rpartition(".")[0]
        deps.add(full)
    return deps - {_module_name(path)}


#: The layers of CONTRIBUTING.md's layout, bottom up: the ground; the subjects; the formula sheet, the
#: worked examples and the self-checks (each reads several subjects); the experiments; the views.
GROUND = {"commlib", "commlib.units", "commlib.hardware"}
SUBJECTS = {"step", "collectives", "parameter_servers", "sgd", "network", "today", "lab"}
ABOVE_SUBJECTS = {"commlib.cost", "commlib.worked", "commlib.check", "commlib.questions"}


def _layer(module: str) -> int:
    """0 ground, 1 subjects, 2 formula sheet and self-checks, 3 experiments, 4 views."""
    top = ".".join(module.split(".")[:2])
    if module in GROUND:
        return 0
    if top.partition(".")[2] in SUBJECTS:
        return 1
    if top in ABOVE_SUBJECTS:
        return 2
    if top == "commlib.experiments":
        return 3
    if top == "commlib.views":
        return 4
    raise AssertionError(f"{module} is in no layer of CONTRIBUTING.md's layout: place it there and here")


def test_every_module_has_a_layer():
    assert sorted({_layer(m) for m in MODULES}) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_model_module_imports_no_view_library(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            assert name.split(".")[0] not in VIEW_LIBS, f"{path} imports {name}"


def test_no_import_runs_up_the_layers():
    up = sorted((m, d) for m, p in MODULES.items() for d in _module_deps(p) if _layer(d) > _layer(m))
    assert not up, f"imports against the layers (ground -> subjects -> formula sheet and self-checks -> experiments -> views): {up}"


def test_a_subject_reads_another_subjects_modules_not_the_formula_sheet():
    """The formula sheet lists the subjects' closed forms; a subject imports them from the subject that defines them."""
    sheet = sorted((m, d) for m, p in MODULES.items() if _layer(m) == 1 for d in _module_deps(p) if d == "commlib.cost")
    assert not sheet, f"subjects importing commlib.cost instead of a subject's cost module: {sheet}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state, stack, cycles = {}, [], []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return cycles


def test_no_import_cycle_even_through_imports_inside_functions():
    graph = {m: _module_deps(p) for m, p in MODULES.items()}
    assert not _cycles(graph), _cycles(graph)


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_subjects_read_like_the_table_of_contents():
    """One package per subject, each beside its views and experiments of the same name; the ground below."""
    subjects = {"step", "collectives", "parameter_servers", "sgd", "network", "today", "lab"}
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert subjects <= packages
    views = {p.stem for p in (ROOT / "views").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    shared = {"animation", "calculator", "claims", "plots", "prose", "results", "tables", "__init__"}  # claims: beside experiments/claims
    assert views - shared <= subjects, f"views named for no subject: {sorted(views - shared - subjects)}"
    experiments = {p.stem for p in (ROOT / "experiments").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    assert experiments - {"__init__", "claims"} <= subjects, f"experiments named for no subject: {sorted(experiments - subjects)}"
    top = {p.stem for p in ROOT.glob("*.py")}
    assert top <= {"__init__", "units", "hardware", "check", "cost", "worked"}, sorted(top)


# The model layer's functions that run an algorithm or a simulation (moving real arrays, replaying
# events, training). Figures, animations and tables take their results as input; a view never calls
# them. Calculators call the model's ``*_results`` functions, which is what those are for.
SIMULATIONS = {
    "commlib.collectives.simulate": {"reduce_order_demo", "reduce", "broadcast", "gather", "scatter", "all_gather",
                                     "reduce_scatter", "all_to_all", "allreduce"},
    "commlib.collectives.compare": {"reduce_step_counts", "trace_vs_formula", "buffer_sizes"},
    "commlib.network.topology": {"map_flows", "map_trace", "allreduce_trace", "staged_exchange", "sharing_comparison",
                                 "intra_host_reduction", "gallery_runs", "ring_check", "hierarchy_runs"},
    "commlib.parameter_servers.simulate": {"ps_round", "byteps_round", "server_and_ring_volumes", "sharding_curves",
                                           "demo_round", "traffic_check"},
    "commlib.sgd.simulate": {"simulate", "schedule", "replay", "monte_carlo_runtime_ratio"},
    "commlib.sgd.simpy_model": {"k_async", "k_batch_async", "k_sync"},
    "commlib.sgd.training": {"train", "make_problem"},
    "commlib.sgd.overlap": {"schedule", "overlap_timeline", "bucket_sweep"},
    "commlib.today.compression": {"train_compressed", "best_over_grid"},
    "commlib.today.local_sgd": {"run", "best_over_grid"},
    "commlib.today.in_network": {"switch_allreduce", "link_loads"},
    "commlib.today.moe": {"dispatch", "expert_loads"},
    "commlib.today.zero": {"zero_step"},
}
VIEW_FILES = sorted((ROOT / "views").rglob("*.py"))


def _model_calls(tree: ast.AST, imports: dict[str, str]) -> set[str]:
    """``module.function`` for every call a view makes into the model layer."""
    calls = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in imports:
            calls.add(f"{imports[f.value.id]}.{f.attr}")
        elif isinstance(f, ast.Name) and f.id in imports:
            calls.add(imports[f.id])
    return calls


def _experiment_runs() -> set[str]:
    """``commlib.experiments.<...>.function`` for every experiment function that runs something.

    A function runs something if it calls a function of :data:`SIMULATIONS` or another such
    function of its module; summaries, labels and the calculators' ``*_results`` do not.
    """
    runs = set()
    simulators = set().union(*SIMULATIONS.values())
    for path in sorted((ROOT / "experiments").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        called = {}
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                called[fn.name] = {n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id
                                   for n in ast.walk(fn) if isinstance(n, ast.Call)
                                   and isinstance(n.func, (ast.Attribute, ast.Name))}
        mine = {name for name, calls in called.items() if calls & simulators}
        while True:
            more = {name for name, calls in called.items() if calls & mine} - mine
            if not more:
                break
            mine |= more
        runs |= {f"{_module_name(path)}.{name}" for name in mine if not name.endswith("_results")}
    return runs


EXPERIMENT_RUNS = _experiment_runs()


def _is_simulation(call: str) -> bool:
    module, _, function = call.rpartition(".")
    return call in EXPERIMENT_RUNS or function in SIMULATIONS.get(module, set())


@pytest.mark.parametrize("path", VIEW_FILES, ids=lambda p: str(p.relative_to(ROOT / "views")))
def test_views_run_no_experiment(path):
    calls = _model_calls(ast.parse(path.read_text(encoding="utf-8")), _imports(path))
    if path.name in {"collectives.py", "sync_async.py", "overlap.py", "step.py"}:
        assert calls, f"{path.name}: found no call into the model layer (is the scan still right?)"
    runs = sorted(c for c in calls if _is_simulation(c))
    assert not runs, f"{path.name} runs {', '.join(runs)}: move the run to the model layer and pass its result in"


def test_imports_resolve_relative_to_the_module():
    imports = _imports(ROOT / "views" / "sgd" / "overlap.py")
    assert imports["overlap"] == "commlib.sgd.overlap" and imports["hardware"] == "commlib.hardware"


def test_experiments_that_run_are_recognised():
    assert {"commlib.experiments.collectives.ring_run", "commlib.experiments.sgd.staleness.lr_rule_study"} <= EXPERIMENT_RUNS
    assert "commlib.experiments.collectives.contributors" not in EXPERIMENT_RUNS


def test_the_scan_sees_a_simulation_call():
    source = "def f():\n    sgd.simulate('async', 4)\n    sync_async.law_time_runs()\n    sync_async.sgd_results()\n"
    imports = {"sgd": "commlib.sgd.simulate", "sync_async": "commlib.experiments.sgd.sync_async"}
    calls = _model_calls(ast.parse(source), imports)
    assert calls == {"commlib.sgd.simulate.simulate", "commlib.experiments.sgd.sync_async.law_time_runs",
                     "commlib.experiments.sgd.sync_async.sgd_results"}
    assert [c for c in sorted(calls) if _is_simulation(c)] == ["commlib.experiments.sgd.sync_async.law_time_runs",
                                                                 "commlib.sgd.simulate.simulate"]
    assert not _is_simulation("commlib.experiments.sgd.sync_async.sgd_results")

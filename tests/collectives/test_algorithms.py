"""The algorithm registry: one record per algorithm, read by the cost model, the simulation and the comparison.

Every all-reduce record's closed form (``terms``) equals what its executed schedule's trace
counts: steps, the busiest port's bytes, the busiest reducer's bytes.
"""

import math
import subprocess
import sys

import numpy as np
import pytest

from commlib import cost
from commlib.collectives import algorithms, compare
from commlib.collectives import simulate as collectives

NS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 25]


def params_for(alg: algorithms.Algorithm, n: int) -> list[dict]:
    """A few valid parameter sets for ``alg`` on n ranks."""
    if "rails" in alg.params:
        out = []
        for h in [h for h in range(1, n + 1) if n % h == 0][:3]:
            out += [{"hosts": h, "rails": c} for c in sorted({1, n // h})]
        return out
    if "hosts" in alg.params:
        return [{"hosts": h} for h in range(1, n + 1) if n % h == 0][:3]
    if "grid" in alg.params:
        return [g for g in ({"grid": (r, n // r)} for r in range(1, n + 1) if n % r == 0) if _valid(alg, n, g)][:3]
    if "chunks" in alg.params:
        return [{"chunks": q} for q in (1, 2, 5)]
    return [{}]


def _valid(alg: algorithms.Algorithm, n: int, params: dict) -> bool:
    try:
        alg.checked(n, **params)
    except ValueError:
        return False
    return True


def name_of(alg: algorithms.Algorithm) -> str:
    return alg.name


def exact_length(n: int, params: dict) -> int:
    """A vector length that every piece of every algorithm divides evenly."""
    q = params.get("chunks", 1)
    return 4 * math.lcm(n * params.get("rails", 1), 1 << (n.bit_length() - 1), 2 * q, *params.get("grid", (1,)))


@pytest.mark.parametrize("name", list(algorithms.ALLREDUCE))
@pytest.mark.parametrize("n", NS)
def test_closed_form_equals_the_executed_trace(name, n):
    alg = algorithms.ALLREDUCE[name]
    for params in params_for(alg, n):
        length = exact_length(n, params)
        arrays = [np.arange(length, dtype=np.int64) * (r + 1) for r in range(n)]
        results, trace = collectives.allreduce(arrays, name, **params)
        total = sum(arrays)
        assert all(np.array_equal(r, total) for r in results), (name, n, params)
        terms = alg.cost(length * 8, n, **params)
        assert trace.steps == terms.steps, (name, n, params)
        counted = trace.port_bytes if alg.ports == "rank" else trace.link_port_bytes
        assert counted == pytest.approx(terms.bytes, abs=1e-6), (name, n, params)
        assert trace.critical_reduced == pytest.approx(terms.reduced, abs=1e-6), (name, n, params)
        if not alg.multi_port:
            assert trace.port_bytes == trace.critical_bytes
        assert cost.allreduce_terms(length * 8, n, name, **params) == terms
        # the trace's time under alpha-beta-gamma is the closed form's
        bw, lat, gam = 1e9, 2e-6, 1e-10
        assert collectives.trace_time(trace, bw, lat, gam, ports=alg.ports) == pytest.approx(
            terms.time(bw, lat, gam), rel=1e-9)


def test_one_source_of_names():
    assert collectives.ALLREDUCE_ALGORITHMS == tuple(algorithms.ALLREDUCE) == compare.ALGORITHMS
    assert compare.ALGORITHM_NAMES == {k: a.label for k, a in algorithms.ALLREDUCE.items()}
    assert cost.ALLREDUCE_ALGORITHMS == algorithms.names("all_reduce", family="flat")
    assert cost.COLLECTIVE_ALGORITHMS == {op: tuple(t) for op, t in algorithms.COLLECTIVES.items()}
    for name, alg in algorithms.ALLREDUCE.items():
        assert alg.name == name and alg.collective == "all_reduce" and alg.schedule is not None
        assert alg.label and alg.source and alg.terms.__doc__


def test_registry_and_cost_import_without_numpy():
    code = ("import sys; sys.modules['numpy'] = None; import commlib.cost as c, commlib.collectives.algorithms as a; "
            "print(c.allreduce_time(1e6, 16, 1e9, 1e-6, 'double_binary_tree', chunks=8) > 0, len(a.ALLREDUCE))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "True"


@pytest.mark.parametrize("bad, word", [
    (lambda: cost.allreduce_terms(1e6, 8, "pipelined_tree", chunks=0), "chunks"),
    (lambda: cost.allreduce_terms(1e6, 8, "hierarchical", hosts=3), "hosts"),
    (lambda: cost.allreduce_terms(1e6, 8, "torus", grid=(3, 3)), "grid"),
    (lambda: cost.allreduce_terms(1e6, 8, "ring", chunks=2), "chunks"),
    (lambda: cost.allreduce_terms(1e6, 8, "butterfly"), "algorithm"),
    (lambda: collectives.allreduce([np.ones(4)] * 4, "double_binary_tree", chunks=-1), "chunks"),
])
def test_bad_parameters_name_themselves(bad, word):
    with pytest.raises(ValueError, match=word):
        bad()


@pytest.mark.parametrize("n", [7, 16, 64, 256])
def test_pipelined_trees_approach_3M_and_2M_and_the_double_tree_beats_the_single(n):
    m = 1e9
    single = cost.allreduce_terms(m, n, "pipelined_tree", chunks=4096)
    double = cost.allreduce_terms(m, n, "double_binary_tree", chunks=4096)
    assert single.bytes == pytest.approx(3 * m, rel=0.01)
    assert double.bytes == pytest.approx(2 * m, rel=0.01)
    assert double.bytes < single.bytes
    assert single.steps == double.steps == 4096 + 2 * (n.bit_length() - 1) - 1


def test_best_chunks_is_no_worse_than_its_neighbours():
    from commlib.collectives.algorithms.pipelined_tree import best_chunks, tree_terms

    for m in (1e4, 1e6, 1e8):
        q = best_chunks(m, 16, 12.5e9, 5e-6, trees=2)
        t = tree_terms(m, 16, q, 2).time(12.5e9, 5e-6)
        for other in (max(1, q // 3), q * 3):
            assert t <= tree_terms(m, 16, other, 2).time(12.5e9, 5e-6) + 1e-15


def test_cluster_calculator_model_imports_without_numpy():
    code = ("import sys; sys.modules['numpy'] = None; import commlib.collectives.calculators as c; "
            "r = c.cluster_results('resnet50', 'fp16', 16, 2, 'nvlink2', 'eth_25g', 'double_binary_tree', 100.0, 90.0); "
            "p = c.primitive_results('all-to-all', 'bruck', 8, '64 MiB', 'eth_25g'); "
            "print(r['time of one all-reduce'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("ms")


def test_cluster_results_names_bad_parameters():
    from commlib.collectives import calculators as cluster

    for kwargs, word in (({"hosts": 3}, "hosts"), ({"target_percent": 100.0}, r"efficiency goal \(%\)"),
                         ({"t_compute_ms": 0.0}, r"compute \(ms/step\)"), ({"nics_per_host": -1}, "nics_per_host"),
                         ({"algorithm": "torus_both_ways", "n": 12, "hosts": 2}, "grid")):
        with pytest.raises(ValueError, match=word):
            cluster.cluster_results(**kwargs)


@pytest.mark.parametrize("trees", [1, 2])
def test_pipelined_tree_loads_grow_linearly_in_the_chunks_as_stated(trees):
    from commlib.collectives.algorithms import pipelined_tree as pt

    for n in (2, 3, 5, 8, 13, 16, 31, 64, 100):
        counted = [pt._unit_loads_counted(n, q, trees) for q in range(1, 201)]
        assert [pt.unit_loads(n, q, trees) for q in range(1, 201)] == counted, n
        assert counted[-1][1] > counted[-2][1]          # more chunks, more chunk-rounds on the busiest port

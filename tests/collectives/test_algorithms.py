"""The algorithm registry: one record per algorithm, read by the cost model, the simulation and the comparison.

Every all-reduce record's closed form (``terms``) equals what its executed schedule's trace
counts: steps, the busiest port's bytes, the busiest reducer's bytes.
"""

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commlib import cost
from commlib.collectives import algorithms, compare
from commlib.collectives import simulate as collectives

NS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 25, 31, 32, 33, 48, 64]


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


def exact_length(alg: algorithms.Algorithm, n: int, params: dict) -> int:
    """A vector length that every piece of the algorithm divides evenly."""
    q = params.get("chunks", 1)
    return 4 * math.lcm(alg.even_length(n), n * params.get("rails", 1), 1 << (n.bit_length() - 1), 2 * q,
                        *params.get("grid", (1,)))


@pytest.mark.parametrize("name", list(algorithms.ALLREDUCE))
@pytest.mark.parametrize("n", NS)
def test_closed_form_equals_the_executed_trace(name, n):
    alg = algorithms.ALLREDUCE[name]
    for params in params_for(alg, n):
        length = exact_length(alg, n, params)
        arrays = [np.arange(length, dtype=np.int64) * (r + 1) for r in range(n)]
        results, trace = collectives.allreduce(arrays, name, **params)
        total = sum(arrays)
        assert all(np.array_equal(r, total) for r in results), (name, n, params)
        terms = alg.cost(length * 8, n, **params)
        # one start-up per message at the busiest port, for every algorithm alike
        assert trace.startups(alg.ports) == terms.steps, (name, n, params)
        if not alg.multi_port:
            assert trace.steps == terms.steps, (name, n, params)
        if alg.links_per_rank > 1:   # behind a switch: one port per rank carries all of a step's messages
            assert trace.startups("rank") == alg.cost(length * 8, n, links_per_rank=1, **params).steps
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


def test_every_registered_module_runs_in_the_page():
    """The registry imports its modules by name: each must load without numpy, as the website's Python does."""
    from commlib.views.calculator import pure_python_modules

    for module in algorithms._MODULES:
        assert pure_python_modules(f"commlib.collectives.algorithms.{module}") is not None, module


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
    # start-ups, one per message at the busiest port: 3 (in and out of an inner rank) and 4 (inner in one
    # tree, leaf in the other) a round of the q + 2D - 1
    assert single.steps == pytest.approx(3 * 4096, rel=0.01)
    assert double.steps == pytest.approx(4 * 4096, rel=0.01)


@pytest.mark.parametrize("n", [3, 7, 12, 16, 33, 96])
@pytest.mark.parametrize("q", [1, 2, 9, 14])
def test_tree_start_ups_are_the_busiest_ranks_messages_in_the_executed_trace(n, q):
    """The trees' closed-form start-ups are the most messages any one rank sends (or receives) in a round,
    summed over the rounds, counted rank by rank in the executed trace."""
    from commlib.collectives.algorithms.pipelined_tree import rounds

    for name in ("pipelined_tree", "double_binary_tree"):
        _, trace = collectives.allreduce([np.arange(4 * n * q, dtype=np.int64)] * n, name, chunks=q)
        per_round = {}
        for m in trace.messages:
            for key in ((m.step, "out", m.src), (m.step, "in", m.dst)):
                per_round[key] = per_round.get(key, 0) + 1
        most = {}
        for (step, _, _), count in per_round.items():
            most[step] = max(most.get(step, 0), count)
        assert len(most) == trace.steps == rounds(n, q)
        assert sum(most.values()) == cost.allreduce_terms(4 * n * q * 8, n, name, chunks=q).steps, (name, n, q)
        if n >= 7 and q >= 2 * (n.bit_length() - 1):   # an inner rank's windows all open at once
            assert max(most.values()) == (3 if name == "pipelined_tree" else 4)


def test_best_chunks_is_no_worse_than_its_neighbours():
    from commlib.collectives.algorithms.pipelined_tree import best_chunks, tree_terms

    for m in (1e4, 1e6, 1e8):
        q = best_chunks(m, 16, 12.5e9, 5e-6, trees=2)
        t = tree_terms(m, 16, q, 2).time(12.5e9, 5e-6)
        for other in (max(1, q // 3), q * 3):
            assert t <= tree_terms(m, 16, other, 2).time(12.5e9, 5e-6) + 1e-15


@pytest.mark.parametrize("n, trees", [(7, 1), (16, 2), (128, 2), (100, 1)])
def test_best_chunks_is_the_exhaustive_optimum(n, trees):
    """No q up to 4096 is faster than the one best_chunks picks (sizes from start-up-bound to bandwidth-bound)."""
    from commlib.collectives.algorithms.pipelined_tree import best_chunks, tree_terms

    bw, lat = 12.5e9, 5e-6
    for m in (1e3, 1e6, 76.9e6, 1e10):
        for gamma in (0.0, 1e-11):
            q = best_chunks(m, n, bw, lat, trees, gamma)
            times = [tree_terms(m, n, k, trees).time(bw, lat, gamma) for k in range(1, 4097)]
            assert times[q - 1] <= min(times) * (1 + 1e-12), (m, gamma, q, times.index(min(times)) + 1)


def test_cluster_calculator_model_imports_without_numpy():
    code = ("import sys; sys.modules['numpy'] = None; import commlib.collectives.calculators as c; "
            "r = c.cluster_results('resnet50', 'fp16', 16, 16, 'nvlink2', 'eth_25g', 'double_binary_tree', 100.0, 90.0); "
            "p = c.primitive_results('all-to-all', 'bruck', 8, '64 MiB', 'eth_25g'); "
            "print(r['time of one all-reduce'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("ms")


def test_cluster_results_names_bad_parameters():
    from commlib.collectives import calculators as cluster

    for kwargs, word in (({"hosts": 3}, "hosts"), ({"target_percent": 100.0}, r"efficiency goal \(%\)"),
                         ({"t_compute_ms": 0.0}, r"compute \(ms/step\)"), ({"nics_per_host": -1}, "nics_per_host"),
                         ({"algorithm": "torus_both_ways", "n": 12, "hosts": 2}, "^n must be a square of at least 9")):
        with pytest.raises(ValueError, match=word):
            cluster.cluster_results(**kwargs)


@pytest.mark.parametrize("trees", [1, 2])
def test_pipelined_tree_loads_grow_linearly_in_the_chunks_as_stated(trees):
    from commlib.collectives.algorithms import pipelined_tree as pt

    for n in (2, 3, 5, 8, 13, 16, 31, 64, 100):
        counted = [pt._unit_loads_counted(n, q, trees) for q in range(1, 201)]
        assert [pt.unit_loads(n, q, trees) for q in range(1, 201)] == counted, n
        assert counted[-1][1] > counted[-2][1]          # more chunks, more chunk-rounds on the busiest port


# ---------------------------------------------------------------------------
# the closed form against the executed trace, finer: uneven lengths, and per phase on two kinds of link
# ---------------------------------------------------------------------------
COST_ALGS = cost.ALLREDUCE_ALGORITHMS  # the flat ones: one uniform network, no parameter


def make_arrays(n: int, length: int, dtype, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return [rng.uniform(-2, 2, length).astype(dtype) for _ in range(n)]
    return [rng.integers(-9, 10, length).astype(dtype) for _ in range(n)]


C = collectives
Trace = collectives.Trace


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 64), st.integers(0, 200), st.sampled_from(COST_ALGS), st.sampled_from([1, 2, 4, 8]))
def test_allreduce_trace_within_one_element_per_step(n, length, alg, itemsize):
    dtype = {1: np.int8, 2: np.int16, 4: np.float32, 8: np.float64}[itemsize]
    _, trace = C.allreduce(make_arrays(n, length, dtype, seed=length), alg)
    terms = cost.allreduce_terms(length * itemsize, n, alg)
    assert trace.steps == terms.steps
    slack = trace.steps * itemsize
    # each step's largest piece is at least the average piece and at most one element more
    assert terms.bytes - 1e-9 <= trace.critical_bytes <= terms.bytes + slack
    assert terms.reduced - 1e-9 <= trace.critical_reduced <= terms.reduced + slack
    if length % algorithms.allreduce_algorithm(alg).even_length(n) == 0:   # every step's pieces of one size
        assert trace.critical_bytes == pytest.approx(terms.bytes, abs=1e-9)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 16, 33])
def test_ring_every_rank_sends_and_receives_2_n_minus_1_over_n_M(n):
    k = 5
    arrays = make_arrays(n, k * n, np.float32, seed=1)
    m = k * n * 4
    for record in (False, True):
        _, trace = C.allreduce(arrays, "ring", record=record)
        want = 2 * (n - 1) * k * 4  # 2(n-1) messages of M/n bytes
        assert want == pytest.approx(cost.ring_bytes_per_rank(m, n))
        assert trace.bytes_sent.tolist() == [want] * n
        assert trace.bytes_received.tolist() == [want] * n


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
def test_naive_root_link_carries_2_p_minus_1_N(n):
    length = 7
    arrays = make_arrays(n, length, np.float64, seed=2)
    _, trace = C.allreduce(arrays, "naive")
    m = length * 8
    sent, recv = trace.bytes_sent, trace.bytes_received
    assert sent[0] == (n - 1) * m and recv[0] == (n - 1) * m
    assert sent[0] + recv[0] == 2 * (n - 1) * m
    assert all(sent[i] == m and recv[i] == m for i in range(1, n))
    assert trace.steps == 2 * (n - 1)
    for s in range(trace.steps):  # the root is in every message
        assert all(0 in (msg.src, msg.dst) for msg in trace.step_messages(s))


def phase_critical_bytes(trace: Trace, phase: str) -> int:
    largest: dict[int, int] = {}
    for m in trace.messages:
        if m.phase == phase:
            largest[m.step] = max(largest.get(m.step, 0), m.nbytes)
    return sum(largest.values())


@pytest.mark.parametrize("n, hosts", [(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (12, 3), (16, 4), (8, 1), (8, 8),
                                      (24, 6), (64, 8)])
def test_hierarchical_trace_equals_cost(n, hosts):
    g = n // hosts
    length = 3 * n
    arrays = make_arrays(n, length, np.float32, seed=n + hosts)
    _, trace = C.allreduce(arrays, "hierarchical", hosts=hosts)
    m = length * 4
    assert trace.steps == 2 * (g - 1) + 2 * (hosts - 1)
    # per phase: g-1 steps of M/g inside hosts each way; 2(h-1) steps of M/(g h) across
    assert phase_critical_bytes(trace, "intra-reduce-scatter") == (g - 1) * m // g
    assert phase_critical_bytes(trace, "intra-all-gather") == (g - 1) * m // g
    assert phase_critical_bytes(trace, "inter-allreduce") == 2 * (hosts - 1) * m // (g * hosts)
    intra_bw, inter_bw, intra_lat, inter_lat, gamma = 150e9, 12.5e9, 2e-6, 15e-6, 1e-10
    want = cost.hierarchical_allreduce_time(m, hosts, g, intra_bw, inter_bw, intra_lat, inter_lat, gamma)
    bw = {"intra-reduce-scatter": intra_bw, "inter-allreduce": inter_bw, "intra-all-gather": intra_bw}
    lat = {"intra-reduce-scatter": intra_lat, "inter-allreduce": inter_lat, "intra-all-gather": intra_lat}
    assert C.trace_time(trace, bw, lat, gamma) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("n, grid", [(4, (2, 2)), (6, (2, 3)), (6, (3, 2)), (12, None), (16, (4, 4)),
                                     (7, None), (24, (4, 6)), (64, None), (8, (1, 8)), (8, (8, 1))])
def test_torus_trace_equals_cost(n, grid):
    rows, cols = grid or C.most_square_grid(n)
    length = 2 * n
    arrays = make_arrays(n, length, np.float64, seed=n)
    _, trace = C.allreduce(arrays, "torus", grid=grid)
    m = length * 8
    assert trace.steps == 2 * (cols - 1) + 2 * (rows - 1)
    assert phase_critical_bytes(trace, "row-reduce-scatter") == (cols - 1) * m // cols
    assert phase_critical_bytes(trace, "column-allreduce") == 2 * (rows - 1) * m // (cols * rows)
    bw, lat, gamma = 25e9, 5e-6, 2e-10
    want = cost.torus_allreduce_time(m, rows, cols, bw, lat, gamma)
    assert C.trace_time(trace, bw, lat, gamma) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("family, links, ok", [("flat", 1, True), ("flat", 2, False), ("pipelined", 2, False),
                                               ("two-level", 1, True), ("two-level", 4, True),
                                               ("multi-link", 2, True), ("multi-link", 1, False)])
def test_a_family_says_whether_its_ranks_drive_several_links(family, links, ok):
    from commlib.collectives.algorithms.base import DRIVES_SEVERAL_LINKS, FAMILIES

    assert set(DRIVES_SEVERAL_LINKS) == set(FAMILIES)
    ring = algorithms.ALLREDUCE["ring"]
    kw = dict(name="x", label="x", collective="all_reduce", terms=ring.terms, schedule=ring.schedule,
              family=family, links_per_rank=links)
    if ok:
        assert algorithms.Algorithm(**kw).links_per_rank == links
    else:
        with pytest.raises(ValueError, match="several links"):
            algorithms.Algorithm(**kw)
    # every record of the registry keeps its family's rule
    for record in algorithms.ALLREDUCE.values():
        must = DRIVES_SEVERAL_LINKS[record.family]
        assert must is None or must == (record.links_per_rank > 1)

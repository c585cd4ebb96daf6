"""Tests for commlib.collectives.simulate: results against numpy, traces against commlib.cost.

Expectations are derived independently of the code under test: reductions
from numpy's own ``ufunc.reduce``, message counts and bytes from the closed
forms in :mod:`commlib.cost` or from counting by hand in the test.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commlib import cost
from commlib.collectives import algorithms
from commlib.collectives import simulate as C
from commlib.collectives.schedules import ring_reduce
from commlib.collectives.trace import Trace

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

INT_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint16]
FLOAT_DTYPES = [np.float32, np.float64]
COST_ALGS = cost.ALLREDUCE_ALGORITHMS  # the flat ones allreduce_terms knows


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def make_arrays(n: int, length: int, dtype, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return [rng.uniform(-2, 2, length).astype(dtype) for _ in range(n)]
    lo = 0 if dtype.kind == "u" else -9
    return [rng.integers(lo, 10, length).astype(dtype) for _ in range(n)]


def expected_reduction(arrays, op: str) -> np.ndarray:
    """numpy's reduction over ranks, in the arrays' dtype (wrapping for ints, like the ranks do)."""
    stack = np.stack(arrays)
    ufunc = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply,
             "band": np.bitwise_and, "bor": np.bitwise_or}[op]
    return ufunc.reduce(stack, axis=0, dtype=stack.dtype) if stack.shape[0] else stack


def assert_reduced(result, arrays, op):
    exp = expected_reduction(arrays, op)
    assert result.dtype == exp.dtype and result.shape == exp.shape
    if exp.dtype.kind == "f":
        n = len(arrays)
        eps = np.finfo(exp.dtype).eps
        # error bound of any summation / product order: n eps times the sum of magnitudes
        mag = np.abs(np.stack(arrays)).sum(axis=0) if op == "sum" else np.abs(exp)
        np.testing.assert_allclose(result, exp, rtol=4 * n * eps, atol=4 * n * eps * (mag.max(initial=0) + 1))
    else:
        np.testing.assert_array_equal(result, exp)


def kwargs_for(alg: str, n: int, pick: int = 0) -> dict:
    """Parameters for ``alg`` on n ranks, read from what the record takes (the ``pick``-th valid choice)."""
    record = algorithms.ALLREDUCE[alg]
    ds = divisors(n)
    if "rails" in record.params:
        h = ds[pick % len(ds)]
        return {"hosts": h, "rails": 1 + pick % (n // h)}
    if "hosts" in record.params:
        return {"hosts": ds[pick % len(ds)]}
    if "grid" in record.params:
        grids = [(d, n // d) for d in ds if _runs(alg, n, {"grid": (d, n // d)})]
        return {"grid": grids[pick % len(grids)]} if grids else {"grid": (1, n)}
    if "chunks" in record.params:
        return {"chunks": 1 + pick % 3}
    return {}


def _runs(alg: str, n: int, params: dict) -> bool:
    try:
        algorithms.ALLREDUCE[alg].checked(n, **params)
    except ValueError:
        return False
    return True


# every algorithm that runs on every n (a square-only grid does not; test_algorithms.py runs it on its n)
ALL_ALGS = tuple(a for a in C.ALLREDUCE_ALGORITHMS if all(_runs(a, n, kwargs_for(a, n)) for n in range(1, 65)))


# ---------------------------------------------------------------------------
# operators and associativity
# ---------------------------------------------------------------------------
PY_OPS = {"sum": operator.add, "max": max, "min": min, "prod": operator.mul,
          "band": operator.and_, "bor": operator.or_}


@SETTINGS
@given(st.sampled_from(sorted(PY_OPS)), st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50)),
                                                  min_size=0, max_size=20))
def test_apply_op_is_elementwise_python_op(op, pairs):
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    assert C.apply_op(op, a, b).tolist() == [PY_OPS[op](x, y) for x, y in pairs]


@pytest.mark.parametrize("op", ["band", "bor"])
def test_bitwise_ops_refuse_floats(op):
    with pytest.raises(ValueError, match="op"):
        C.apply_op(op, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="op"):
        C.allreduce([np.ones(3), np.ones(3)], op=op)


def test_order_demo_non_associative_operators_differ():
    # worked by hand: ((1-2)-3)-4 = -8; (1-2)-(3-4) = 0
    assert C.reduce_order_demo([1, 2, 3, 4], "subtract") == (-8, 0)
    # ((2^1)^3)^2 = 8^2 = 64;  (2^1)^(3^2) = 2^9 = 512
    assert C.reduce_order_demo([2, 1, 3, 2], "power") == (64, 512)
    assert C.order_expression([1, 2, 3, 4], "subtract", "tree") == "(1 - 2) - (3 - 4)"
    assert C.order_expression([1, 2, 3, 4], "sum", "serial") == "((1 + 2) + 3) + 4"


@SETTINGS
@given(st.sampled_from(["sum", "max", "min", "band", "bor", "prod"]),
       st.lists(st.integers(-20, 20), min_size=1, max_size=33))
def test_order_demo_associative_operators_agree(op, values):
    demo = C.reduce_order_demo(values, op)
    serial = values[0]
    for v in values[1:]:
        serial = PY_OPS[op](serial, v)
    wrapped = (serial + 2**63) % 2**64 - 2**63  # numpy int64 arithmetic wraps around
    assert demo.serial == demo.tree == wrapped


@SETTINGS
@given(st.integers(1, 40), st.integers(0, 10**6))
def test_demo_tree_order_is_the_binomial_reduce_order(n, seed):
    # floats of wildly different magnitudes: the grouping decides the rounding, so bitwise
    # agreement means the demo's tree and reduce(algorithm="tree") group the same way
    rng = np.random.default_rng(seed)
    vals = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 9, n)
    res, _ = C.reduce([np.array([v]) for v in vals], algorithm="tree")
    assert C.reduce_order_demo(list(vals), "sum").tree == res[0][0]
    ser, _ = C.reduce([np.array([v]) for v in vals], algorithm="serial")
    assert C.reduce_order_demo(list(vals), "sum").serial == ser[0][0]


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda: C.allreduce([]), "arrays"),
    (lambda: C.allreduce([np.ones(3), np.ones(4)]), "arrays"),
    (lambda: C.allreduce([np.ones(3), np.ones(3, np.float32)]), "arrays"),
    (lambda: C.allreduce([np.ones((2, 2)), np.ones((2, 2))]), "arrays"),
    (lambda: C.allreduce(np.ones(3)), "arrays"),
    (lambda: C.allreduce([np.array(["a"]), np.array(["b"])]), "arrays"),
    (lambda: C.allreduce([np.ones(3)], op="mean"), "op"),
    (lambda: C.allreduce([np.ones(3)], algorithm="butterfly"), "algorithm"),
    (lambda: C.allreduce([np.ones(3)] * 4, algorithm="hierarchical"), "hosts"),
    (lambda: C.allreduce([np.ones(3)] * 4, algorithm="hierarchical", hosts=3), "hosts"),
    (lambda: C.allreduce([np.ones(3)] * 4, algorithm="hierarchical", hosts=0), "hosts"),
    (lambda: C.allreduce([np.ones(3)] * 4, algorithm="torus", grid=(3, 2)), "grid"),
    (lambda: C.allreduce([np.ones(3)] * 4, algorithm="torus", grid=(4,)), "grid"),
    (lambda: C.reduce([np.ones(3)] * 4, root=4), "root"),
    (lambda: C.reduce([np.ones(3)] * 4, root=-1), "root"),
    (lambda: C.reduce([np.ones(3)] * 4, algorithm="ring"), "algorithm"),
    (lambda: C.broadcast([np.ones(3)] * 2, root=2), "root"),
    (lambda: C.gather([], root=0), "arrays"),
    (lambda: C.scatter([np.ones(3), np.ones(2)]), "arrays"),
    (lambda: C.reduce_scatter([np.ones(3)] * 2, op="xor"), "op"),
    (lambda: C.reduce_order_demo([], "sum"), "values"),
    (lambda: C.reduce_order_demo([1, 2], "divide"), "op"),
    (lambda: C.most_square_grid(0), "n"),
    (lambda: C.trace_time(C.allreduce([np.ones(3)] * 2)[1], bandwidth=0), "bandwidth"),
    (lambda: C.trace_time(C.allreduce([np.ones(3)] * 2)[1], bandwidth={"x": 1.0}), "bandwidth"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------
# correctness: every algorithm, every op, leaves every rank with numpy's reduction
# ---------------------------------------------------------------------------
@st.composite
def allreduce_case(draw, algs=ALL_ALGS):
    n = draw(st.one_of(st.integers(1, 9), st.integers(10, 64)))
    length = draw(st.one_of(st.integers(0, n + 1), st.integers(0, 3 * n + 2)))
    alg = draw(st.sampled_from(algs))
    dtype = draw(st.sampled_from(INT_DTYPES + FLOAT_DTYPES))
    ops = ["sum", "max", "min", "prod"] + (["band", "bor"] if np.dtype(dtype).kind != "f" else [])
    op = draw(st.sampled_from(ops))
    kw = kwargs_for(alg, n, draw(st.integers(0, 20)))
    record = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    return n, length, alg, np.dtype(dtype), op, kw, record, seed


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(allreduce_case())
def test_allreduce_gives_every_rank_the_reduction(case):
    n, length, alg, dtype, op, kw, record, seed = case
    arrays = make_arrays(n, length, dtype, seed)
    before = [a.copy() for a in arrays]
    results, trace = C.allreduce(arrays, alg, op=op, record=record, **kw)
    assert len(results) == n and isinstance(trace, Trace)
    assert_reduced(results[0], arrays, op)
    for r in results:  # every rank holds bitwise the same answer
        np.testing.assert_array_equal(r, results[0])
    for a, b, r in zip(arrays, before, results):  # inputs untouched, outputs are new memory
        np.testing.assert_array_equal(a, b)
        assert not np.shares_memory(a, r)


@pytest.mark.parametrize("alg", ALL_ALGS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 8, 12, 13, 16, 64])
def test_allreduce_explicit_sizes(alg, n):
    for length in sorted({0, 1, max(n - 1, 0), n, 2 * n + 1}):
        arrays = make_arrays(n, length, np.int32, seed=n * 100 + length)
        results, trace = C.allreduce(arrays, alg, **kwargs_for(alg, n, pick=1))
        for r in results:
            assert_reduced(r, arrays, "sum")


@SETTINGS
@given(st.integers(1, 64), st.integers(0, 150), st.integers(0, 2**31), st.sampled_from([0, 1, 2]),
       st.sampled_from(["sum", "max", "prod"]))
def test_primitives_hold_what_numpy_says(n, length, seed, which_root, op):
    arrays = make_arrays(n, length, np.int64, seed)
    root = [0, n - 1, n // 2][which_root]
    stack = np.stack(arrays)
    full = expected_reduction(arrays, op)

    for alg in C.REDUCE_ALGORITHMS:
        res, _ = C.reduce(arrays, op=op, root=root, algorithm=alg)
        np.testing.assert_array_equal(res[root], full)
        for i in range(n):
            if i != root:
                np.testing.assert_array_equal(res[i], arrays[i])

    res, _ = C.broadcast(arrays, root=root)
    for r in res:
        np.testing.assert_array_equal(r, arrays[root])

    res, _ = C.gather(arrays, root=root)
    np.testing.assert_array_equal(res[root], stack.ravel())

    res, _ = C.scatter(arrays, root=root)
    for i, piece in enumerate(np.array_split(arrays[root], n)):
        np.testing.assert_array_equal(res[i], piece)

    res, _ = C.all_gather(arrays)
    for r in res:
        np.testing.assert_array_equal(r, stack.ravel())

    res, _ = C.reduce_scatter(arrays, op=op)
    for i, piece in enumerate(np.array_split(full, n)):
        np.testing.assert_array_equal(res[i], piece)

    res, _ = C.all_to_all(arrays)
    for j in range(n):
        want = np.concatenate([np.array_split(arrays[i], n)[j] for i in range(n)])
        np.testing.assert_array_equal(res[j], want)


def test_two_d_input_equals_list_input():
    arrays = make_arrays(6, 20, np.float32, seed=3)
    res_list, t_list = C.allreduce(arrays)
    res_mat, t_mat = C.allreduce(np.stack(arrays))
    for a, b in zip(res_list, res_mat):
        np.testing.assert_array_equal(a, b)
    assert t_list.critical_bytes == t_mat.critical_bytes and t_list.steps == t_mat.steps


# ---------------------------------------------------------------------------
# the vectorised ring and the step-by-step ring are the same algorithm
# ---------------------------------------------------------------------------
@SETTINGS
@given(st.integers(1, 64), st.integers(0, 200), st.sampled_from(INT_DTYPES + FLOAT_DTYPES),
       st.sampled_from(["sum", "prod", "max", "min"]), st.integers(0, 2**31))
def test_fast_ring_matches_step_by_step_ring(n, length, dtype, op, seed):
    arrays = make_arrays(n, length, dtype, seed)
    fast, t_fast = C.allreduce(arrays, "ring", op=op, record=False)
    slow, t_slow = C.allreduce(arrays, "ring", op=op, record=True)
    for a, b in zip(fast, slow):  # same operations in the same order: bitwise equal, floats included
        np.testing.assert_array_equal(a, b)
        assert a.flags.writeable
    cf, cs = t_fast.columns(), t_slow.columns()
    for key in ("step", "src", "dst", "nbytes", "reduced"):
        np.testing.assert_array_equal(cf[key], cs[key])
    assert [(m.chunk, m.phase) for m in t_fast.messages] == [(m.chunk, m.phase) for m in t_slow.messages]
    assert not np.shares_memory(fast[0], fast[-1]) or n == 1


@SETTINGS
@given(st.integers(1, 24), st.integers(0, 90), st.sampled_from([4, 8, 12, 28, 64, 1 << 20]),
       st.sampled_from(["sum", "prod", "max"]), st.integers(0, 2**31))
def test_fast_ring_blocks_keep_each_pieces_ring_order(n, length, block_bytes, op, seed):
    # the ring's order written out independently: piece c starts on rank c + 1 and every rank it
    # reaches computes op(own, partial), around the ring to rank c. Magnitudes spread over ten
    # decades make any other grouping round differently.
    rng = np.random.default_rng(seed)
    matrix = (rng.standard_normal((n, length)) * 10.0 ** rng.integers(-5, 6, (n, length))).astype(np.float32)
    f = {"sum": np.add, "prod": np.multiply, "max": np.maximum}[op]
    want = np.empty(length, np.float32)
    for c, piece in enumerate(np.array_split(np.arange(length), n)):
        partial = matrix[(c + 1) % n, piece]
        for k in range(2, n + 1):
            partial = f(matrix[(c + k) % n, piece], partial)
        want[piece] = partial
    before = matrix.copy()
    out = np.full(length, np.nan, np.float32)
    got = ring_reduce(matrix, f, out=out, block_bytes=block_bytes)  # block_bytes=4: one float32 per block
    assert got is out
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(matrix, before)  # the reduce-scatter only reads
    if length:
        np.testing.assert_array_equal(C.allreduce(list(matrix), "ring", op=op, record=True)[0][0], want)


# ---------------------------------------------------------------------------
# in place (MPI_IN_PLACE): same values, same trace, written over the inputs
# ---------------------------------------------------------------------------
def assert_same_trace(t1: Trace, t2: Trace) -> None:
    c1, c2 = t1.columns(), t2.columns()
    for key in ("step", "src", "dst", "nbytes", "reduced"):
        np.testing.assert_array_equal(c1[key], c2[key])
    assert [(m.chunk, m.phase) for m in t1.messages] == [(m.chunk, m.phase) for m in t2.messages]
    assert t1.algorithm == t2.algorithm and len(t1.snapshots) == len(t2.snapshots)
    for s1, s2 in zip(t1.snapshots, t2.snapshots):
        for a, b in zip(s1, s2):
            np.testing.assert_array_equal(a, b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(allreduce_case(), st.sampled_from(["list", "matrix", "padded rows"]))
def test_inplace_equals_copying_and_overwrites_exactly_the_inputs(case, form):
    n, length, alg, dtype, op, kw, record, seed = case
    original = np.stack(make_arrays(n, length, dtype, seed)) if length else np.zeros((n, 0), dtype)
    copied, t_copy = C.allreduce(list(original), alg, op=op, record=record, **kw)
    if form == "matrix":
        mem = original.copy()
        arrays = mem
    else:  # separate buffers; "padded rows" are views of one wider array whose padding must survive
        mem = np.concatenate([original, np.full((n, 3), 7, dtype)], axis=1)
        arrays = [mem[i, :length] if form == "padded rows" else mem[i, :length].copy() for i in range(n)]
    results, t_in = C.allreduce(arrays, alg, op=op, record=record, inplace=True, **kw)
    assert len(results) == n
    for i in range(n):
        np.testing.assert_array_equal(results[i], copied[i])  # bitwise, floats included
        assert results[i].dtype == copied[i].dtype
        if form == "matrix":
            assert np.shares_memory(results[i], mem[i]) or length == 0
        else:
            assert results[i] is arrays[i]
            np.testing.assert_array_equal(arrays[i], copied[i])
    if form == "matrix":
        np.testing.assert_array_equal(mem, np.stack(copied) if length else mem)
    if form == "padded rows":
        np.testing.assert_array_equal(mem[:, length:], 7)
    assert_same_trace(t_in, t_copy)


def test_copying_mode_leaves_inputs_and_inplace_changes_them():
    # by hand: ranks hold 1, 2, 3 in both elements; the sum is 6
    for alg in ALL_ALGS:
        kw = kwargs_for(alg, 3)
        grads = np.array([[1, 1], [2, 2], [3, 3]], dtype=np.int64)
        res, _ = C.allreduce(grads, alg, **kw)
        assert grads.tolist() == [[1, 1], [2, 2], [3, 3]] and [r.tolist() for r in res] == [[6, 6]] * 3
        res, _ = C.allreduce(grads, alg, inplace=True, **kw)
        assert grads.tolist() == [[6, 6]] * 3 and all(np.shares_memory(r, grads) for r in res)


def test_inplace_reaches_arrays_given_by_an_iterator():
    arrays = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    res, _ = C.allreduce(iter(arrays), inplace=True)
    assert [a.tolist() for a in arrays] == [[4.0, 6.0]] * 2 and res[0] is arrays[0]


def _overlapping():
    flat = np.arange(10.0)
    return [flat[0:4], flat[3:7]]


@pytest.mark.parametrize("make", [
    lambda: np.ones((3, 4))[:, ::2],                        # rows not contiguous
    lambda: np.asfortranarray(np.ones((3, 4))),             # column-major
    lambda: np.broadcast_to(np.ones(4), (3, 4)),            # read-only view
    lambda: [np.ones(4), np.ones(8)[::2]],                  # one rank strided
    lambda: [np.ones(4), np.frombuffer(bytes(32))],         # one rank read-only
    lambda: [np.ones(4), [1.0, 1.0, 1.0, 1.0]],             # not a numpy array to overwrite
    lambda: [np.ones(4)] * 3,                               # one buffer for three ranks
    _overlapping,                                            # two ranks share memory
])
def test_inplace_refuses_buffers_it_cannot_overwrite(make):
    arrays = make()
    before = [np.array(a, copy=True) for a in arrays]
    for alg in ("ring", "tree"):
        with pytest.raises(ValueError, match="inplace") as err:
            C.allreduce(arrays, alg, inplace=True)
        assert "arrays" in str(err.value)
    for a, b in zip(arrays, before):  # refused before touching anything
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_inplace_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="inplace"):
        C.allreduce(np.ones((2, 3)), inplace=bad)


def test_most_square_grid_is_most_square():
    for n in range(1, 101):
        rows, cols = C.most_square_grid(n)
        assert rows * cols == n and rows <= cols
        assert not any(n % r == 0 for r in range(rows + 1, math.isqrt(n) + 1))


PRIMITIVES = {
    # name: (call, M in bytes as commlib.cost counts it, for n ranks of `length` elements of 8 B)
    "broadcast": (lambda a: C.broadcast(a, root=0), lambda n, length: length * 8),
    "reduce": (lambda a: C.reduce(a, root=0), lambda n, length: length * 8),
    "gather": (lambda a: C.gather(a, root=0), lambda n, length: n * length * 8),
    "scatter": (lambda a: C.scatter(a, root=0), lambda n, length: length * 8),
    "reduce_scatter": (C.reduce_scatter, lambda n, length: length * 8),
    "all_gather": (C.all_gather, lambda n, length: n * length * 8),
    "all_to_all": (C.all_to_all, lambda n, length: length * 8),
}


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 32, 64])
def test_primitives_trace_equals_collective_terms(name, n):
    call, nbytes = PRIMITIVES[name]
    length = 3 * n
    _, trace = call(make_arrays(n, length, np.float64, seed=n))
    terms = cost.collective_terms(name, nbytes(n, length), n)
    assert trace.steps == terms.steps
    assert trace.critical_bytes == pytest.approx(terms.bytes, abs=1e-9)
    assert trace.critical_reduced == pytest.approx(terms.reduced, abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 13])
def test_serial_reduce_is_a_chain_of_n_minus_1_steps(n):
    length = 4
    arrays = make_arrays(n, length, np.int32, seed=n)
    for root in sorted({0, n - 1}):
        _, trace = C.reduce(arrays, root=root, algorithm="serial")
        m = length * 4
        assert trace.steps == n - 1
        assert trace.critical_bytes == (n - 1) * m and trace.critical_reduced == (n - 1) * m
        assert all(msg.dst == root for msg in trace.messages)
        assert sorted(msg.src for msg in trace.messages) == [i for i in range(n) if i != root]


def test_tree_reduce_depth_is_ceil_log2():
    for n in range(1, 70):
        _, trace = C.reduce([np.ones(2)] * n, algorithm="tree")
        assert trace.steps == (math.ceil(math.log2(n)) if n > 1 else 0)


# ---------------------------------------------------------------------------
# the machine model: one send and one receive per rank per step
# ---------------------------------------------------------------------------
def all_traces(n: int, length: int):
    arrays = make_arrays(n, length, np.int16, seed=n)
    for alg in ALL_ALGS:
        yield alg, C.allreduce(arrays, alg, **kwargs_for(alg, n, pick=1))[1]
    yield "reduce:serial", C.reduce(arrays, algorithm="serial")[1]
    for name, (call, _) in PRIMITIVES.items():
        yield name, call(arrays)[1]


@pytest.mark.parametrize("n", [2, 3, 5, 6, 8, 12, 17])
def test_single_port_every_step(n):
    for name, trace in all_traces(n, 2 * n + 1):
        if name in algorithms.ALLREDUCE and algorithms.ALLREDUCE[name].multi_port:
            continue  # the pipelined trees share a port among a round's messages (tests/test_algorithms.py)
        c = trace.columns()
        for s in np.unique(c["step"]):
            sel = c["step"] == s
            assert np.unique(c["src"][sel]).size == sel.sum(), (name, s)
            assert np.unique(c["dst"][sel]).size == sel.sum(), (name, s)
            assert not np.any(c["src"][sel] == c["dst"][sel]), (name, s)


@pytest.mark.parametrize("n", [1, 4, 6, 9])
def test_column_trace_agrees_with_plain_trace(n):
    # the vectorised properties against Trace's own definitions on the same messages
    for name, trace in all_traces(n, 2 * n + 3):
        plain = Trace(n=n, messages=list(trace.messages))
        assert trace.steps == plain.steps, name
        assert trace.bytes_sent.tolist() == plain.bytes_sent.tolist(), name
        assert trace.bytes_received.tolist() == plain.bytes_received.tolist(), name
        assert trace.critical_bytes == plain.critical_bytes, name
        assert trace.critical_reduced == plain.critical_reduced, name
        assert trace.link_bytes() == plain.link_bytes(), name
        if plain.steps:
            assert trace.step_messages(0) == plain.step_messages(0), name


# ---------------------------------------------------------------------------
# snapshots: the animation shows the real values
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 4, 5])
def test_ring_snapshots_show_partial_sums(n):
    length = 2 * n
    arrays = make_arrays(n, length, np.int64, seed=7)
    results, trace = C.allreduce(arrays, "ring", record=True)
    assert len(trace.snapshots) == trace.steps + 1 == 2 * (n - 1) + 1
    assert trace.snapshot_labels[0] == "start"
    for i in range(n):
        np.testing.assert_array_equal(trace.snapshots[0][i], arrays[i])
        np.testing.assert_array_equal(trace.snapshots[-1][i], results[i])
    pieces = [np.array_split(np.arange(length), n)[c] for c in range(n)]
    # after reduce-scatter step s, rank j holds, for piece c = j - s - 2, the sum over ranks c+1 .. j
    for s in range(n - 1):
        snap = trace.snapshots[s + 1]
        for j in range(n):
            c = (j - s - 2) % n
            contributors = [(c + 1 + k) % n for k in range(s + 2)]
            want = sum(arrays[r][pieces[c]] for r in contributors)
            np.testing.assert_array_equal(snap[j][pieces[c]], want)
    # at the end of reduce-scatter, rank i owns the full reduction of piece i
    total = np.sum(np.stack(arrays), axis=0)
    for i in range(n):
        np.testing.assert_array_equal(trace.snapshots[n - 1][i][pieces[i]], total[pieces[i]])
    assert {m.phase for m in trace.messages} == {"reduce-scatter", "all-gather"}


@pytest.mark.parametrize("alg", ALL_ALGS)
def test_every_algorithm_records_one_snapshot_per_step(alg):
    n = 6
    arrays = make_arrays(n, 9, np.float64, seed=0)
    results, trace = C.allreduce(arrays, alg, record=True, **kwargs_for(alg, n, pick=1))
    assert len(trace.snapshots) == trace.steps + 1 == len(trace.snapshot_labels)
    for i in range(n):
        np.testing.assert_array_equal(trace.snapshots[-1][i], results[i])


def test_tree_reduce_snapshots_and_broadcast_fill():
    arrays = [np.array([r + 1]) for r in range(4)]
    _, trace = C.reduce(arrays, algorithm="tree", record=True)
    # step 1: 1 -> 0 and 3 -> 2; step 2: 2 -> 0 (values by hand)
    assert [int(b[0]) for b in trace.snapshots[1]] == [3, 2, 7, 4]
    assert [int(b[0]) for b in trace.snapshots[2]] == [10, 2, 7, 4]
    _, trace = C.broadcast(arrays, root=1, record=True)
    held = [[not np.isnan(b[0]) for b in snap] for snap in trace.snapshots]
    assert held[0] == [False, True, False, False] and all(held[-1])


# ---------------------------------------------------------------------------
# time of a trace
# ---------------------------------------------------------------------------
def test_trace_time_by_hand_and_against_cost():
    n, length = 4, 1000
    _, trace = C.allreduce([np.zeros(length, np.float32)] * n, "ring")
    bw, alpha, gamma = 2e9, 3e-6, 1e-9
    piece = length * 4 / n  # 1000 B
    by_hand = 6 * (alpha + piece / bw) + 3 * piece * gamma
    assert C.trace_time(trace, bw, alpha, gamma) == pytest.approx(by_hand, rel=1e-12)
    for alg in COST_ALGS:
        _, t = C.allreduce([np.zeros(64, np.float64)] * 8, alg)
        assert C.trace_time(t, bw, alpha, gamma) == pytest.approx(
            cost.allreduce_time(64 * 8, 8, bw, alpha, alg, gamma), rel=1e-12)
    plain = Trace(n=n, messages=list(trace.messages))
    assert C.trace_time(plain, bw, alpha, gamma) == pytest.approx(by_hand, rel=1e-12)

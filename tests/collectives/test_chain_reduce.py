"""The pipelined chain reduce (chapter 1's long-vector contender): its closed form against its executed trace."""

import numpy as np
import pytest

from commlib import cost, hardware
from commlib.collectives import simulate as collectives
from commlib.collectives.algorithms import chain
from commlib.collectives.engine import ColumnTrace, StepEngine


def run(n: int, length: int, q: int):
    arrays = [np.arange(length, dtype=np.int64) * (r + 1) for r in range(n)]
    bufs = [a.copy() for a in arrays]
    trace = ColumnTrace(n, "reduce:chain_pipelined")
    eng = StepEngine(trace, bufs, np.add)
    if n > 1:
        chain.PIPELINED.schedule(eng, n, length, **chain.PIPELINED.checked(n, chunks=q))
    return arrays, bufs, trace


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9])
@pytest.mark.parametrize("q", [1, 2, 3, 7])
def test_closed_form_equals_the_executed_chain(n, q):
    length = 4 * q * 7
    arrays, results, trace = run(n, length, q)
    assert np.array_equal(results[0], sum(arrays))            # the root holds the sum
    terms = chain.PIPELINED.cost(length * 8, n, chunks=q)
    assert trace.steps == terms.steps
    assert trace.critical_bytes == pytest.approx(terms.bytes)
    assert trace.critical_reduced == pytest.approx(terms.reduced)
    bw, lat, gam = 1e9, 2e-6, 1e-10
    assert collectives.trace_time(trace, bw, lat, gam) == pytest.approx(terms.time(bw, lat, gam), rel=1e-9)
    # the root takes in the vector once, pipelined or not
    assert int(trace.bytes_received[0]) == (length * 8 if n > 1 else 0)


def test_one_chunk_is_the_serial_chain():
    for n in (2, 5, 8):
        t = chain.pipelined_terms(1e6, n, 1)
        assert (t.steps, t.bytes) == (n - 1, (n - 1) * 1e6)


@pytest.mark.parametrize("nbytes, n, link", [(64 * 2**20, 8, "eth_25g"), (64 * 2**20, 64, "eth_25g"),
                                             (1e5, 16, "eth_100g"), (8.0, 4, "ib_hdr")])
def test_best_chunks_is_the_fastest_q(nbytes, n, link):
    item = hardware.link(link)
    q = chain.best_chunks(nbytes, n, item.bandwidth, item.latency, most=4096)

    def t(k):
        return chain.pipelined_terms(nbytes, n, k).time(item.bandwidth, item.latency)

    assert t(q) == pytest.approx(min(t(k) for k in range(1, 4097)), rel=1e-12)


def test_pipelined_chain_beats_both_unpipelined_reduces_on_a_long_vector():
    item = hardware.link("eth_25g")
    m = 64 * 2**20
    for n in (4, 8, 16, 64):
        q = chain.best_chunks(m, n, item.bandwidth, item.latency)
        best = chain.pipelined_terms(m, n, q).time(item.bandwidth, item.latency)
        for other in ("tree", "reduce_scatter_gather"):
            assert best < cost.collective_time("reduce", m, n, item.bandwidth, item.latency, other)


def test_bad_chunks_are_refused():
    with pytest.raises(ValueError, match="chunks"):
        chain.PIPELINED.cost(1e6, 8, chunks=0)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("q", [1, 2, 3, 8])
def test_the_figures_sends_take_the_closed_forms_steps(n, q):
    from commlib.experiments.collectives import pipeline_sends

    sends = pipeline_sends("chain", n, q)
    assert max(s.step for s in sends) + 1 == n - 2 + q == chain.pipelined_terms(1.0, n, q).steps
    # rank i passes chunk j to rank i - 1 at step j + (n - 1 - i): every chunk over every link, once
    assert sorted((s.src, s.chunk) for s in sends) == sorted((i, j) for i in range(1, n) for j in range(q))
    assert all(s.dst == s.src - 1 and s.step == s.chunk + n - 1 - s.src for s in sends)
    # the root finishes chunk j at step n - 2 + j
    assert sorted((s.chunk, s.step) for s in sends if s.dst == 0) == [(j, n - 2 + j) for j in range(q)]


def test_the_figures_sends_refuse_bad_input():
    from commlib.experiments.collectives import pipeline_sends

    for kwargs, word in (({"n": 1}, "n"), ({"chunks": 0}, "chunks"), ({"schedule": "ring"}, "schedule")):
        with pytest.raises(ValueError, match=word):
            pipeline_sends(**{"schedule": "chain", **kwargs})

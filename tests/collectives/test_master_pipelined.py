"""The pipelined master (chapter 1's naive all-reduce at its best): its closed form against its executed trace."""

import numpy as np
import pytest

from commlib import cost, hardware
from commlib.collectives import simulate as collectives
from commlib.collectives.algorithms import naive
from commlib.collectives.engine import ColumnTrace, StepEngine


def run(n: int, length: int, q: int):
    arrays = [np.arange(length, dtype=np.int64) * (r + 1) for r in range(n)]
    bufs = [a.copy() for a in arrays]
    trace = ColumnTrace(n, "all_reduce:naive_pipelined")
    eng = StepEngine(trace, bufs, np.add, multi_port=naive.PIPELINED.multi_port)
    if n > 1:
        naive.PIPELINED.schedule(eng, n, length, **naive.PIPELINED.checked(n, chunks=q))
    return arrays, bufs, trace


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 16])
@pytest.mark.parametrize("q", [1, 2, 3, 7])
def test_closed_form_equals_the_executed_trace(n, q):
    length = 4 * q * 7
    arrays, results, trace = run(n, length, q)
    total = sum(arrays)
    assert all(np.array_equal(r, total) for r in results)
    terms = naive.PIPELINED.cost(length * 8, n, chunks=q)
    assert trace.steps == terms.steps
    assert trace.port_bytes == trace.critical_bytes == pytest.approx(terms.bytes)
    assert trace.critical_reduced == pytest.approx(terms.reduced)
    bw, lat, gam = 1e9, 2e-6, 1e-10
    assert collectives.trace_time(trace, bw, lat, gam) == pytest.approx(terms.time(bw, lat, gam), rel=1e-9)
    # the master carries (n - 1) M each way, pipelined or not
    assert int(trace.bytes_received[0]) == int(trace.bytes_sent[0]) == (n - 1) * length * 8


def test_one_chunk_is_the_unpipelined_master():
    for n in (2, 5, 8):
        assert naive.pipelined_terms(1e6, n, 1) == cost.allreduce_terms(1e6, n, "naive")


@pytest.mark.parametrize("nbytes, n, link", [(64 * 2**20, 8, "eth_25g"), (1e5, 16, "eth_100g"), (8.0, 4, "ib_hdr")])
def test_best_chunks_is_the_fastest_q(nbytes, n, link):
    item = hardware.link(link)
    q = naive.best_chunks(nbytes, n, item.bandwidth, item.latency, most=4096)
    best = min(range(1, 4097), key=lambda k: naive.pipelined_terms(nbytes, n, k).time(item.bandwidth, item.latency))
    t = naive.pipelined_terms(nbytes, n, q).time(item.bandwidth, item.latency)
    assert t == pytest.approx(naive.pipelined_terms(nbytes, n, best).time(item.bandwidth, item.latency), rel=1e-12)


def test_pipelining_halves_at_most_the_masters_bandwidth_term():
    big = naive.pipelined_terms(1e9, 8, 4096)
    assert big.bytes == pytest.approx(7e9, rel=1e-3)          # (n - 1) M, against 2 (n - 1) M unpipelined
    with pytest.raises(ValueError, match="chunks"):
        naive.PIPELINED.cost(1e6, 8, chunks=0)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("q", [1, 3, 5])
def test_the_figures_sends_take_the_closed_forms_steps(n, q):
    from commlib.experiments.collectives import pipeline_sends

    sends = pipeline_sends("master", n, q)
    assert max(s.step for s in sends) + 1 == (n - 1) * (q + 1) == naive.pipelined_terms(1.0, n, q).steps
    into = [s for s in sends if s.dst == 0]
    out = [s for s in sends if s.src == 0]
    assert len(into) == len(out) == (n - 1) * q and len(sends) == 2 * (n - 1) * q
    # nothing goes back in the first n - 1 steps (fill), nothing comes in during the last n - 1 (drain)
    assert min(s.step for s in out) == n - 1 and max(s.step for s in into) == (n - 1) * q - 1

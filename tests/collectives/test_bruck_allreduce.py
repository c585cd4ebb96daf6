"""Bruck's all-reduce (its all-gather run backwards as a reduce-scatter, then the all-gather), run on arrays.

The registry's schedule moves real numpy arrays between ranks step by step (the step engine refuses a step in which
a rank sends or receives twice); every rank must end with the sum, and the trace's start-ups, critical-path bytes,
bytes reduced and most bytes sent must equal the record's closed form, on every n from 2 to 17 and on a few primes.
"""

import numpy as np
import pytest

from commlib.collectives import compare, simulate
from commlib.collectives.algorithms import ALLREDUCE, log2_ceil
from commlib.collectives.schedules import bruck_blocks

RECORD = ALLREDUCE["bruck"]
NS = [*range(2, 18), 31, 61, 97, 127]


@pytest.mark.parametrize("n", NS)
def test_sum_on_every_rank_and_trace_is_closed_form(n):
    rng = np.random.default_rng(n)
    length = 3 * n                                   # n blocks of 3 elements: every message of a step one size
    arrays = [rng.integers(-1000, 1000, length) for _ in range(n)]
    results, trace = simulate.allreduce(arrays, "bruck")
    total = np.sum(arrays, axis=0)
    assert all(np.array_equal(r, total) for r in results)
    nbytes = length * arrays[0].itemsize
    terms = RECORD.terms(nbytes, n)
    assert trace.steps == terms.steps == 2 * log2_ceil(n)
    assert trace.critical_bytes == pytest.approx(terms.bytes) == pytest.approx(2 * (n - 1) / n * nbytes)
    assert trace.critical_reduced == pytest.approx(terms.reduced)
    assert trace.bytes_sent.max() == pytest.approx(RECORD.most_sent(nbytes, n))
    assert sum(RECORD.step_bytes(nbytes, n)) == pytest.approx(terms.bytes)
    assert len(RECORD.step_bytes(nbytes, n)) == terms.steps


def test_floats_close_to_the_sum_and_uneven_blocks():
    """Floats, and a length that n does not divide: the sum still lands on every rank (up to rounding)."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(23) for _ in range(7)]
    results, trace = simulate.allreduce(arrays, "bruck")
    for r in results:
        np.testing.assert_allclose(r, np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)
    assert trace.steps == 6


def test_blocks_per_step_sum_to_n_minus_one():
    """Bruck's all-gather sends min(d, n - d) blocks at distance d: n - 1 blocks in all, the least."""
    for n in range(2, 200):
        assert sum(c for _, c in bruck_blocks(n)) == n - 1


def test_ring_bytes_in_log_steps_on_a_prime():
    """On 97 ranks, the ring's bytes with 14 start-ups instead of 192: faster than the ring at every size."""
    ring, bruck = compare.alpha_beta_coefficients("ring", 97), compare.alpha_beta_coefficients("bruck", 97)
    assert bruck[1] == pytest.approx(ring[1]) and bruck[0] == 14 < ring[0]
    assert "bruck" in compare.one_port_allreduces(97)

"""The other collectives' closed forms where they depend on n: Bruck's all-to-all held against its
executed trace for every n, and the forms costed for powers of two only refusing other n."""

import numpy as np
import pytest

from commlib import cost
from commlib.collectives import simulate as collectives
from commlib.collectives.algorithms import primitives


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 33])
def test_bruck_closed_form_equals_the_executed_trace(n):
    length = 4 * n
    arrays = [np.arange(length, dtype=np.int64) + 1000 * r for r in range(n)]
    bruck, trace = collectives.all_to_all(arrays, algorithm="bruck")
    pairwise, _ = collectives.all_to_all(arrays)
    assert all(np.array_equal(a, b) for a, b in zip(bruck, pairwise))
    terms = cost.collective_terms("all_to_all", length * 8, n, "bruck")
    assert trace.steps == terms.steps
    assert trace.critical_bytes == pytest.approx(terms.bytes)
    assert trace.port_bytes == trace.critical_bytes


@pytest.mark.parametrize("n, ratio", [(3, 2 / 3), (5, 1.0), (9, 13 / 9), (8, 1.5)])
def test_bruck_sends_less_than_lg_p_halves_off_powers_of_two(n, ratio):
    assert cost.collective_terms("all_to_all", 1.0, n, "bruck").bytes == pytest.approx(ratio)


def test_bruck_handles_uneven_pieces():
    arrays = [np.arange(7, dtype=np.int64) + 100 * r for r in range(3)]
    bruck, _ = collectives.all_to_all(arrays, algorithm="bruck")
    pairwise, _ = collectives.all_to_all(arrays)
    assert all(np.array_equal(a, b) for a, b in zip(bruck, pairwise))


@pytest.mark.parametrize("op, algorithm", [("all_gather", "recursive_doubling"), ("reduce_scatter", "recursive_halving"),
                                           ("reduce", "reduce_scatter_gather")])
def test_power_of_two_forms_refuse_other_n(op, algorithm):
    for n in (1, 2, 4, 8, 64):
        cost.collective_terms(op, 1e6, n, algorithm)
    for n in (3, 6, 12):
        with pytest.raises(ValueError, match="power of two"):
            cost.collective_terms(op, 1e6, n, algorithm)
    assert primitives.one_bits_below(8) == 12


def test_all_to_all_names_a_bad_algorithm():
    with pytest.raises(ValueError, match="algorithm"):
        collectives.all_to_all([np.ones(2)] * 2, algorithm="ring")

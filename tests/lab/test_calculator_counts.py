"""The lab calculator counts the steps and bytes of the algorithm MPICH's selection runs, at every size and n."""

import pytest

from commlib.lab import calculators, fit, mpich

SIZES = tuple(float(2**k) for k in range(10, 27, 2))


def _table(op):
    s = fit.Series(op, 2, SIZES, tuple(1e-5 + x / 2e9 for x in SIZES), "mpich")
    return {s.label: (s, fit.AlphaBeta(5e-6, 1 / 2e9))}, s.label


def test_broadcast_on_64_ranks_at_16_kib_is_scatter_and_recursive_doubling():
    # MPICH's table: on a power of two from 8 ranks, 12 KiB < M <= 512 KiB, scatter + recursive-doubling
    # all-gather, 2 lg 64 = 12 steps (the ring all-gather's count would be lg 64 + 63 = 69).
    table, label = _table("broadcast")
    out = calculators.fitted_model_results(table, label, "16 KiB", 64)
    assert out["cost-model algorithm"] == "scatter_recursive_doubling (12 steps)"
    assert out["latency term a alpha"].startswith("60.00 µs")


@pytest.mark.parametrize("op", mpich.OPS)
@pytest.mark.parametrize("n", [2, 3, 6, 8, 12, 16, 64])
def test_calculator_steps_are_the_selection_s_counts(op, n):
    table, label = _table(op)
    for x in (1024, 12288, 16384, 81920, 2**19, 2**20, 2**26):
        out = calculators.fitted_model_results(table, label, f"{x} B", n)
        t = mpich.terms(op, x, n)
        assert out["cost-model algorithm"].startswith(mpich.algorithm(op, x, n) + " ")
        assert f"({t.steps} step" in out["cost-model algorithm"]


def test_non_power_of_two_short_all_gather_is_bruck():
    assert mpich.algorithm("all_gather", 6000, 6) == "bruck"
    assert mpich.terms("all_gather", 6000, 6).steps == 3

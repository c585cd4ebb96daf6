"""Chapter 5's self-checks: the exact mean is asked for, and the rule of thumb n/K gets a hint that names it."""

import itertools

import pytest

from commlib.check import check, expected
from commlib.experiments.sgd import staleness


@pytest.mark.parametrize("workers, k", list(itertools.product((16, 48, 64), (2, 8))))
def test_mean_staleness_takes_the_exact_mean_and_names_the_rule_of_thumb(workers, k):
    assert check("ch05.mean_staleness", (workers - 1) / k, workers=workers, k=k)
    wrong = check("ch05.mean_staleness", workers / k, workers=workers, k=k)
    assert not wrong and "rule of thumb n/K" in str(wrong)


@pytest.mark.parametrize("workers", (16, 48, 64))
def test_k_batch_at_k_equals_n_takes_the_exact_mean(workers):
    assert check("ch05.k_batch_at_k_equals_n", (workers - 1) / workers, workers=workers)
    wrong = check("ch05.k_batch_at_k_equals_n", 1, workers=workers)
    assert not wrong and "n - 1, not n" in str(wrong)


@pytest.mark.parametrize("workers, base_rate", list(itertools.product((4, 8, 64), (0.2, 1.0))))
def test_rule_mean_rate_names_the_rate_over_the_mean_staleness(workers, base_rate):
    right = expected("ch05.rule_mean_rate", workers=workers, base_rate=base_rate)
    assert right == pytest.approx(staleness.mean_rule_rate(base_rate, workers))
    assert check("ch05.rule_mean_rate", right, workers=workers, base_rate=base_rate)
    wrong = check("ch05.rule_mean_rate", base_rate / (workers - 1), workers=workers, base_rate=base_rate)
    assert not wrong and "Gupta et al.'s rate" in str(wrong)


def test_exposed_at_twice_the_flops_accepts_the_bound_prediction():
    from commlib import hardware
    from commlib.sgd import overlap

    link = hardware.link("eth_25g")
    _, t_bwd = overlap.step_compute_time("resnet50", 32, 10e12)
    r = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency, t_backward=t_bwd)
    assert check("ch05.exposed_at_twice_flops", 1e3 * (r.comm_total - r.t_backward / 2))
    assert not check("ch05.exposed_at_twice_flops", 1e3 * r.exposed)
    assert check("ch05.balance_batch", 32 * r.comm_total / r.t_backward)

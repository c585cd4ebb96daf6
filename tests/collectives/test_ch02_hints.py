"""Chapter 2's self-check hints recognise a mistake from the variant's own numbers, not the book's."""

import pytest

from commlib.check import check


@pytest.mark.parametrize("n, size_gb", [(8, 1.0), (4, 2.0), (32, 6.0)])
def test_two_m_is_recognised_for_every_buffer(n, size_gb):
    assert "Not 2M" in check("ch02.ring_bytes_gb", 2 * size_gb, n=n, size_gb=size_gb).message


@pytest.mark.parametrize("n", [64, 8, 128])
def test_the_rings_step_count_is_recognised_for_every_n(n):
    assert "ring's count" in check("ch02.hd_steps", 2 * (n - 1), n=n).message
    assert "ring's count" not in check("ch02.hd_steps", 2 * (n - 1) + 1, n=n).message


@pytest.mark.parametrize("algbw, n", [(40.0, 8), (25.0, 16), (150.0, 64)])
def test_dividing_by_the_bus_factor_is_recognised_for_every_variant(algbw, n):
    assert "You divided" in check("ch02.busbw_gbs", algbw * n / (2 * (n - 1)), algbw=algbw, n=n).message


@pytest.mark.parametrize("algbw, n", [(40.0, 8), (25.0, 4), (150.0, 64)])
def test_the_worked_examples_sixteen_gpus_are_recognised_off_sixteen(algbw, n):
    assert "16 GPUs" in check("ch02.busbw_gbs", algbw * 2 * 15 / 16, algbw=algbw, n=n).message
    assert "16 GPUs" not in check("ch02.busbw_gbs", algbw * 2 * 15 / 16 * 1.05, algbw=algbw, n=n).message


@pytest.mark.parametrize("n", [32, 8, 128])
def test_one_byte_per_bf16_parameter_is_recognised(n):
    from commlib import hardware
    from commlib.collectives import compare
    link = hardware.link("ib_hdr")
    right = 1e3 * compare.allreduce_seconds("ring", hardware.gradient_bytes("gpt2_xl", "bf16"), n, link.bandwidth,
                                            link.latency)
    assert check("ch02.gpt2xl_ms", right, n=n).correct
    assert "2 bytes per bf16" in check("ch02.gpt2xl_ms", right / 2, n=n).message

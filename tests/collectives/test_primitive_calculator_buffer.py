"""Chapter 1's calculator says what M is for each collective, shows the master at its best beside the
naive all-reduce, and refuses what its forms do not cover, naming the control."""

import pytest

from commlib.collectives import calculators
from commlib.collectives.algorithms import naive


def test_every_collective_says_what_m_is_and_block_collectives_give_the_block():
    for primitive, op in calculators.PRIMITIVE_OPS.items():
        r = calculators.primitive_results(primitive, calculators.PRIMITIVE_ALGORITHMS[op][0], 8, "64 MiB", "eth_25g")
        assert r["M here is"] == calculators.buffer_meaning(op, 64 * 2**20, 8)
        assert ("8.00 MiB" in r["M here is"]) == (op in calculators.BLOCK_COLLECTIVES)
    assert set(calculators.BLOCK_COLLECTIVES) == {"gather", "scatter", "all_gather", "reduce_scatter", "all_to_all"}


def test_the_per_rank_block_is_not_the_buffer():
    """An all-gather of 8 MiB blocks on 8 ranks is M = 64 MiB: eight times the bytes of M = 8 MiB."""
    whole = calculators.primitive_results("all-gather", "ring", 8, "64 MiB", "eth_25g")
    block = calculators.primitive_results("all-gather", "ring", 8, "8 MiB", "eth_25g")
    link = calculators.hardware.link("eth_25g")

    def shown(nbytes):
        seconds = calculators.cost.collective_terms("all_gather", nbytes, 8, "ring").time(link.bandwidth, link.latency)
        return calculators._time(seconds)

    assert whole["time"] == shown(64 * 2**20) and block["time"] == shown(8 * 2**20)
    assert whole["time"] != block["time"]


def test_the_naive_all_reduce_shows_its_pipelined_form():
    r = calculators.primitive_results("all-reduce", "naive", 8, "64 MiB", "eth_25g")
    link = calculators.hardware.link("eth_25g")
    unpipelined = naive.ALGORITHM.cost(64 * 2**20, 8).time(link.bandwidth, link.latency)
    assert r["time"] == calculators._time(unpipelined)
    q = naive.best_chunks(64 * 2**20, 8, link.bandwidth, link.latency)
    best = naive.PIPELINED.cost(64 * 2**20, 8, chunks=q).time(link.bandwidth, link.latency)
    assert r["same, pipelined at its best"].startswith(f"q = {q} chunks: {calculators._time(best)}")
    assert best < unpipelined
    assert "same, pipelined at its best" not in calculators.primitive_results("all-reduce", "ring", 8, "64 MiB",
                                                                              "eth_25g")
    assert "same, pipelined at its best" not in calculators.primitive_results("all-reduce", "naive", 1, "64 MiB",
                                                                              "eth_25g")
    assert naive.best_chunks(64 * 2**20, 8, 3.125e9, 1e-5) == 46


@pytest.mark.parametrize("primitive, algorithm, n, size", [
    ("all-to-all", "bruck", 4096, "1 B"), ("all-gather", "ring", 8, "7 B"), ("all-reduce", "ring", 16, "10 B"),
    ("broadcast", "scatter_allgather", 8, "4 B"),
])
def test_blocks_below_a_byte_are_refused_by_the_buffers_name(primitive, algorithm, n, size):
    with pytest.raises(ValueError, match=r"^buffer M must be at least n bytes"):
        calculators.primitive_results(primitive, algorithm, n, size, "eth_25g")


def test_whole_vector_algorithms_take_small_buffers():
    shown = calculators.primitive_results("broadcast", "tree", 16, "10 B", "eth_25g")["bytes on the critical path"]
    terms = calculators.cost.collective_terms("broadcast", 10, 16, "tree")
    assert shown == calculators.format_size(terms.bytes, significant=calculators.SIGNIFICANT)
    assert terms.bytes == 10 * 4        # the whole 10 B vector, once per level of a 16-rank tree


@pytest.mark.parametrize("primitive, algorithm", [("all-gather", "recursive_doubling"),
                                                  ("reduce-scatter", "recursive_halving"),
                                                  ("reduce", "reduce_scatter_gather")])
def test_power_of_two_forms_refuse_other_n_by_the_controls_names(primitive, algorithm):
    calculators.primitive_results(primitive, algorithm, 8, "64 MiB", "eth_25g")
    with pytest.raises(ValueError, match=r"^algorithm .* ranks n a power of two"):
        calculators.primitive_results(primitive, algorithm, 6, "64 MiB", "eth_25g")

"""Chapter 1's calculator says what M is for each collective, shows the master at its best beside the
naive all-reduce, and refuses what its forms do not cover, naming the control."""

import pytest

from commlib.collectives import calculators
from commlib.collectives.algorithms import naive
from commlib.step.calculators import check_domain


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


def test_either_reduce_shows_the_pipelined_chain_at_its_best_and_no_other_collective_does():
    """The chapter's fastest long-vector reduce is not in the menu; its line beside either reduce lets a reader see
    it win over 25 Gb/s Ethernet and lose to reduce-scatter + gather over 400 Gb/s (64 MiB, 64 ranks)."""
    from commlib.collectives.algorithms import chain
    label = "chain reduce, pipelined at its best (not in the menu)"
    for link, chain_wins in (("eth_25g", True), ("eth_400g", False)):
        item = calculators.hardware.link(link)
        q = chain.best_chunks(64 * 2**20, 64, item.bandwidth, item.latency)
        best = chain.PIPELINED.cost(64 * 2**20, 64, chunks=q).time(item.bandwidth, item.latency)
        split = calculators.cost.collective_terms("reduce", 64 * 2**20, 64, "reduce_scatter_gather").time(
            item.bandwidth, item.latency)
        for algorithm in calculators.PRIMITIVE_ALGORITHMS["reduce"]:
            r = calculators.primitive_results("reduce", algorithm, 64, "64 MiB", link)
            assert r[label].startswith(f"q = {q} chunks: {calculators._time(best)}")
        assert (best < split) == chain_wins
    short = calculators.primitive_results("reduce", "tree", 8, "1 KiB", "eth_25g")[label]
    assert short.startswith("q = 1:") and "not worth pipelining" in short
    assert label not in calculators.primitive_results("broadcast", "tree", 8, "64 MiB", "eth_25g")
    assert label not in calculators.primitive_results("reduce", "tree", 1, "64 MiB", "eth_25g")


@pytest.mark.parametrize("primitive, algorithm, n, size", [
    ("all-to-all", "bruck", 4096, "1 B"), ("all-gather", "ring", 8, "7 B"), ("all-reduce", "ring", 16, "10 B"),
    ("broadcast", "scatter_allgather", 8, "4 B"),
])
def test_blocks_below_a_byte_are_refused_by_the_buffers_name(primitive, algorithm, n, size):
    with pytest.raises(ValueError, match=r"^buffer M must be at least n bytes"):
        calculators.primitive_results(primitive, algorithm, n, size, "eth_25g")


@pytest.mark.parametrize("primitive, algorithm, n, size, message", [
    ("all-gather", "ring", 2, "10.5 B",
     r"^buffer M must be a whole number of bytes between 2 B \(a byte for each of the 2 ranks\) and 1 PB, got '10.5 B'"),
    ("all-reduce", "tree", 2, "10.5 B", r"^buffer M must be a whole number of bytes"),
    ("all-gather", "ring", 4, "10 B", r"^buffer M must be a multiple of n bytes \(4 B on 4 ranks\).*blocks of 2.5 B"),
    ("all-to-all", "pairwise", 6, "64 MiB", r"^buffer M must be a multiple of n bytes \(6 B on 6 ranks\)"),
])
def test_blocks_of_a_fraction_of_a_byte_are_refused_by_the_buffers_name(primitive, algorithm, n, size, message):
    with pytest.raises(ValueError, match=message):
        calculators.primitive_results(primitive, algorithm, n, size, "eth_25g")


def test_an_algorithm_that_cuts_the_vector_takes_uneven_pieces():
    """A ring all-reduce of 10 B on 4 ranks cuts it into pieces of 2 and 3 B: no refusal, the time is shown."""
    assert calculators.primitive_results("all-reduce", "ring", 4, "10 B", "eth_25g")["time"]


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


def _domain_error(link, n):
    try:
        check_domain(link, n)
    except ValueError as err:
        return str(err)
    return None


@pytest.mark.parametrize("link", calculators.PRIMITIVE_LINKS)
def test_ranks_are_bounded_by_the_links_domain_as_chapter_0_bounds_them(link):
    """The calculator refuses exactly the n that chapter 0's check_domain refuses, naming the ranks n control."""
    for n in (2, 8, 9, 16, 17, 72, 73, 256, 257, 4096):
        expected = _domain_error(link, n)
        if expected is None:
            assert calculators.primitive_results("all-reduce", "ring", n, "64 MiB", link)["time"]
        else:
            with pytest.raises(ValueError) as err:
                calculators.primitive_results("all-reduce", "ring", n, "64 MiB", link)
            assert str(err.value) == expected and expected.startswith("ranks n must be at most")


def test_no_nvlink_domain_takes_4096_ranks():
    """The referee's case: 4,096 ranks over NVLink 4.0 is no network that exists."""
    with pytest.raises(ValueError, match=r"^ranks n must be at most"):
        calculators.primitive_results("all-reduce", "ring", 4096, "64 MiB", "nvlink4")


@pytest.mark.parametrize("link", [key for key, item in calculators.hardware.LINKS.items() if not item.switched])
def test_links_with_no_switch_are_neither_offered_nor_timed(link):
    """Directly wired links (NVLink 1.0's cube mesh, UPI between sockets) split a rank's rate over fixed peers."""
    assert link not in calculators.PRIMITIVE_LINKS
    with pytest.raises(ValueError, match=r"^link: .* joins fixed peers directly"):
        calculators.primitive_results("all-to-all", "pairwise", 4, "64 MiB", link)


def test_what_is_offered_is_every_switched_link_and_the_network_is_stated():
    assert set(calculators.PRIMITIVE_LINKS) == {k for k, item in calculators.hardware.LINKS.items() if item.switched}
    assert {"nvlink1", "upi"}.isdisjoint(calculators.PRIMITIVE_LINKS)
    r = calculators.primitive_results("broadcast", "tree", 8, "64 MiB", "nvlink3")
    assert r["network"].startswith(calculators.NETWORK) and calculators.hardware.link("nvlink3").domain in r["network"]


def test_the_power_of_two_rule_names_the_forms_that_refuse_other_n_and_not_the_folding_all_reduces():
    for op, names in calculators.PRIMITIVE_ALGORITHMS.items():
        for name in names:
            label = calculators.algorithms.algorithm(op, name).label
            refused = _refuses(op, name, 6)
            assert (f"the {op.replace('_', '-')}'s {label}" in calculators.POWER_OF_TWO_FORMS) == refused
    six = calculators.primitive_results("all-reduce", "recursive_doubling", 6, "64 MiB", "eth_25g")
    assert six["steps on the critical path (alpha count)"] == "4"


def _refuses(op, name, n):
    try:
        calculators.primitive_results({v: k for k, v in calculators.PRIMITIVE_OPS.items()}[op], name, n, "48 MiB",
                                      "eth_25g")
    except ValueError:
        return True
    return False


def test_one_chunk_is_not_called_a_pipeline():
    r = calculators.primitive_results("all-reduce", "naive", 8, "1 KiB", "eth_25g")
    assert naive.best_chunks(1024, 8, 3.125e9, 1e-5) == 1
    assert r["same, pipelined at its best"].startswith("q = 1: not worth pipelining")
    assert "chunk j + 1" not in r["same, pipelined at its best"]

"""commlib.check: right answers pass, wrong ones get a useful hint."""

import importlib
import math
import pkgutil

import pytest

import commlib.questions
from commlib import check as checkmod
from commlib.check import check, draw, expected, questions


def test_right_and_wrong():
    right = expected("ch00.gbe_bytes")
    assert check("ch00.gbe_bytes", right).correct
    assert check("ch00.gbe_bytes", right * 1.001).correct      # within 1 %
    assert not check("ch00.gbe_bytes", right * 1.5).correct


@pytest.mark.parametrize("factor, words", [(8, "bits and bytes"), (1 / 8, "bits and bytes"),
                                           (2, "both directions"), (1000, "1000")])
def test_generic_unit_hints(factor, words):
    result = check("ch00.resnet_bw_90", expected("ch00.resnet_bw_90") * factor)
    assert not result.correct
    assert words in result.message


def test_question_specific_hint_comes_first():
    fp32 = expected("ch00.resnet50_fp16_mib") * 2
    assert "fp32" in check("ch00.resnet50_fp16_mib", fp32).message


def test_placeholder_and_wrong_type():
    assert "No answer yet" in check("ch00.gbe_bytes", None).message
    assert "number" in check("ch00.gbe_bytes", "125 MB/s").message


def test_unknown_question():
    with pytest.raises(ValueError, match="question_id"):
        check("ch99.nothing", 1)
    with pytest.raises(ValueError, match="question_id"):
        check("no-dot", 1)


def _chapter_modules():
    return [m.name for m in pkgutil.iter_modules(commlib.questions.__path__)]


@pytest.mark.parametrize("chapter", _chapter_modules())
def test_every_registered_question_accepts_its_own_answer(chapter):
    importlib.import_module(f"commlib.questions.{chapter}")
    ids = questions(chapter)
    assert ids, f"{chapter} registers no questions"
    for qid in ids:
        answer = expected(qid)
        assert check(qid, answer).correct, qid
        if isinstance(answer, (int, float)) and not isinstance(answer, bool) and answer != 0:
            assert not check(qid, answer * 3.3).correct, qid


def test_registry_is_not_empty():
    assert checkmod.questions("ch00")


def test_an_answer_in_bytes_where_gb_was_asked_gets_the_ten_to_the_nine_hint():
    right = expected("ch02.ring_bytes_gb")
    message = check("ch02.ring_bytes_gb", right * 1e9).message
    assert "10^9" in message and message.startswith("Not yet. Your answer is 1e+09 times the right one")


def test_a_cell_that_raised_is_named_with_its_error_not_taken_for_a_missing_answer():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    assert checkmod.watch_answers(shell) and checkmod.watch_answers(shell)   # registered once, however often
    assert sum(cb.__name__ == "_remember_cell_error" for cb in shell.events.callbacks["post_run_cell"]) == 1
    try:
        shell.run_cell("gbe_bytes = 125e6 +")
        shell.run_cell("other = 1 / 0")
        message = check("ch00.gbe_bytes", None, answer_name="gbe_bytes").message
        assert message.startswith("Not yet: your cell raised an error: SyntaxError")
        assert check("ch00.gbe_bytes", None, answer_name="nothing_raised").message.startswith("No answer yet")
        shell.run_cell("gbe_bytes = 125e6")
        assert check("ch00.gbe_bytes", None, answer_name="gbe_bytes").message.startswith("No answer yet")
        shell.run_cell("other = 1 / 0")
        assert "ZeroDivisionError" in check("ch00.gbe_bytes", None, answer_name="other").message
    finally:
        checkmod._CELL_ERRORS.clear()
        InteractiveShell.clear_instance()


def test_generic_slips_are_suggested_only_where_the_unit_allows_them():
    """A count or a ratio has no bits, link directions or unit prefixes to mix up."""
    import importlib
    import pkgutil

    from commlib import check as chk
    from commlib import questions
    for module in pkgutil.iter_modules(questions.__path__):
        importlib.import_module(f"commlib.questions.{module.name}")
    slips = [text for _, text, _ in chk._GENERIC]
    unitless = [q for q in chk._REGISTRY.values() if q.unit not in chk._SIZES | chk._RATES | chk._TIMES]
    assert unitless
    for q in unitless:
        right = q.solve()
        if not isinstance(right, (int, float)) or right == 0:
            continue
        for factor, _, _ in chk._GENERIC:
            for wrong in (right * factor, right / factor):
                message = chk.check(q.id, wrong).message
                allowed = [text for _, text, units in chk._GENERIC if q.unit in units]   # percent vs fraction
                assert not any(slip in message for slip in slips if slip not in allowed), (q.id, wrong, message)


def test_a_fraction_given_for_a_percent_is_named():
    """Reader item: 0.42 typed where 42 % was asked is named as a percent/fraction slip, both ways."""
    from commlib import check as chk
    from commlib.questions import ch00  # noqa: F401  (registers the chapter's questions)
    q = chk._REGISTRY["ch00.faster_gpu_eff"]
    assert q.unit == "%"
    for wrong in (q.solve() / 100, q.solve() * 100):
        assert "fraction and a percent" in chk.check(q.id, wrong).message


def test_the_book_answer_given_for_own_numbers_is_named_as_such():
    from commlib import check as chk
    q = chk._load("ch02.hd_steps")
    book = q.solve()
    other = next(v for v in q.givens[0].values if q.solve(**{q.givens[0].name: v}) != book)
    message = chk.check(q.id, book, **{q.givens[0].name: other}).message
    assert "exercise's own numbers" in message

@pytest.mark.parametrize("n", [8, 4, 16, 32, 64])
def test_the_ring_exercise_names_its_factor_for_every_variant(n):
    """The book's n and every drawn n: 2 M / B and (n-1)/n M / B get the ring's own hint, never a unit slip."""
    from commlib import hardware
    m, b = hardware.gradient_bytes("bert_large", "fp16"), hardware.link("eth_100g").bandwidth
    givens = {} if n == 8 else {"n": n}
    assert expected("ch00.bert_large_ring_ms", **givens) == pytest.approx(1e3 * 2 * (n - 1) / n * m / b)
    for wrong in (2 * m / b, (n - 1) / n * m / b):
        message = check("ch00.bert_large_ring_ms", 1e3 * wrong, **givens).message
        assert "2(n-1)/n" in message and "GiB" not in message and "MiB" not in message, (n, message)


@pytest.mark.parametrize("n", [256, 32, 64, 128, 512])
def test_the_min_batch_exercise_names_the_fp32_slip_and_the_left_out_start_ups_for_every_variant(n):
    from commlib.questions import ch00
    givens = {} if n == 256 else {"n": n}
    message = check("ch00.min_tokens", math.ceil(ch00._min_tokens(n, "fp32")), **givens).message
    assert "fp32" in message, (n, message)
    result = check("ch00.min_tokens", math.ceil(ch00._min_tokens_no_latency(n)), **givens)
    assert not result.correct and "start-ups" in result.message, (n, result.message)
    # whole tokens, rounded up: the bound rounded down is one token short, and the check says so
    bound = ch00._min_tokens(n)
    assert check("ch00.min_tokens", math.ceil(bound), **givens).correct
    result = check("ch00.min_tokens", math.ceil(bound) - 1, **givens)
    assert not result.correct and "round up" in result.message, (n, result.message)


@pytest.mark.parametrize("n, tc", [(16, 0.1), (4, 0.05), (8, 0.2), (32, 0.3), (64, 0.2)])
def test_the_bandwidth_exercise_names_the_ring_factor_for_every_variant(n, tc):
    givens = {} if (n, tc) == (16, 0.1) else {"n": n, "tc": tc}
    whole = expected("ch00.resnet_bw_90", **givens) * n / (n - 1)
    message = check("ch00.resnet_bw_90", whole, **givens).message
    assert "2(n-1)/n" in message, (n, tc, message)


def test_a_unit_slip_factor_that_equals_one_of_the_exercise_numbers_names_both_readings():
    from commlib.check import check

    message = str(check("ch02.ring_bytes_gb", 2 * 7 * 1.0))  # 2(n - 1)M: forgot /n at n = 8
    assert "bits and bytes" in message and "8 is also n" in message


# -- the factors of a formula come before the unit slips, and a slip is named only where it fits best --------

def test_two_times_algbw_at_sixteen_gpus_is_the_missing_ring_factor_not_a_gib_slip():
    """busbw = algbw x 2(n-1)/n; a student's 2 x algbw at n = 16 is 16/15 = 1.067 times the right one,
    0.65 % from the GB-GiB factor 1.074: the hint names n/(n-1), never GiB."""
    mine = {"algbw": 12.0, "n": 16}
    message = check("ch02.busbw_gbs", 2 * 12.0, **mine).message
    assert "n/(n-1) = 16/15" in message and "(n-1)/n missing" in message, message
    assert "GiB" not in message
    right = expected("ch02.busbw_gbs", **mine)
    message = check("ch02.busbw_gbs", right * 15 / 16, **mine).message
    assert "(n-1)/n = 15/16 of the right one" in message and "GiB" not in message, message


@pytest.mark.parametrize("n", [4, 8, 16, 32, 64])
def test_a_missing_n_over_n_minus_one_is_never_taken_for_a_unit_slip(n):
    mine = {"algbw": 25.0, "n": n}
    right = expected("ch02.busbw_gbs", **mine)
    for wrong, words in ((right * n / (n - 1), f"{n}/{n - 1} times"), (right * (n - 1) / n, f"{n - 1}/{n} of")):
        message = check("ch02.busbw_gbs", wrong, **mine).message
        assert words in message and "did you mix" not in message, (n, message)


def test_a_unit_slip_is_named_only_within_its_tight_tolerance():
    right = expected("ch00.resnet_bw_90")
    gib = 2**30 / 1e9
    assert "GiB" in check("ch00.resnet_bw_90", right * gib).message
    assert "GiB" in check("ch00.resnet_bw_90", right * gib * 1.002).message     # rounding of the slip
    off = check("ch00.resnet_bw_90", right * gib * 1.006).message               # 0.6 % off: not the slip
    assert "GiB" not in off and "did you mix" not in off, off


def test_the_nearest_explanation_wins():
    """Two candidates within the tolerance of each other's neighbourhood: the hint names the nearer one."""
    from commlib.check import _nearest
    candidates = [(1.0240, "kB"), (1.0249, "near")]
    assert _nearest(1.0242, candidates)[1] == "kB"
    assert _nearest(1.0248, candidates)[1] == "near"
    assert _nearest(1.04, candidates) is None


def test_kilobytes_and_kibibytes():
    right = expected("ch00.resnet_bw_90")
    assert "kB (10^3 B) and KiB (2^10 B)" in check("ch00.resnet_bw_90", right * 1.024).message
    assert "kB (10^3 B) and KiB (2^10 B)" in check("ch00.resnet_bw_90", right / 1.024).message


def test_half_the_right_answer_names_a_missing_phase_or_direction():
    right = expected("ch00.resnet_bw_90")
    message = check("ch00.resnet_bw_90", right / 2).message
    assert "half the right one" in message and "phases or directions" in message, message


def test_the_formula_factors_are_not_offered_where_the_unit_has_no_phases():
    """A count or a ratio can be n/(n-1) off, but has no phase or direction to halve."""
    from commlib import check as chk
    twice, half, _ = chk._TWO
    unitless = [q for q in (chk._load(qid) for qid in chk.questions("ch04")) if q.unit not in chk.SLIP_UNITS]
    assert unitless
    for q in unitless:
        right = q.solve()
        if isinstance(right, (int, float)) and right:
            for wrong in (right * 2, right / 2):
                message = chk.check(q.id, wrong).message
                assert twice not in message and half not in message, (q.id, message)


def test_an_answer_in_a_one_element_array_or_list_is_that_number_and_several_are_refused():
    import numpy as np

    right = expected("ch02.ring_bytes_gb")
    for boxed in (np.array([right]), np.array([[right]]), [right], (right,)):
        assert check("ch02.ring_bytes_gb", boxed).correct, repr(boxed)
    assert "8 times" in check("ch02.ring_bytes_gb", np.array([8 * right])).message
    for many in (np.array([right, right]), [right, 1.0]):
        result = check("ch02.ring_bytes_gb", many)
        assert not result.correct and "give one number in GB, not 2 of them" in result.message


def test_a_ratio_typed_as_a_percent_is_named():
    right = expected("ch02.hier_speedup")
    assert "a ratio and a percent (x100)" in check("ch02.hier_speedup", 100 * right).message
    assert "a fraction and a percent (x100)" in check("ch00.faster_gpu_eff", expected("ch00.faster_gpu_eff") / 100).message


def test_halving_doublings_one_phase_is_named():
    assert "one phase" in check("ch02.hd_steps", expected("ch02.hd_steps") // 2).message


def test_the_presets_a_question_reads_are_stated_with_their_exact_numbers():
    from commlib import hardware

    facts = " ".join(checkmod.preset_facts("ch00.min_tokens"))
    assert "124\u2009439\u2009808 parameters (`124_439_808` in Python)" in facts
    assert "312 TFLOP/s in dense bf16" in facts and "α = 5 µs" in facts
    assert hardware.model("gpt2") is checkmod.presets_used("ch00.min_tokens")[1]
    assert checkmod.preset_facts("ch00.gbe_bytes") == []
    # a link is given as sold; its rate per direction only where the bytes it carries are fewer
    (nvlink,) = checkmod.preset_facts("ch00.nvlink3_one_way")
    assert "600 GB/s per GPU" in nvlink and "300" not in nvlink
    assert any("per direction for data" in f for f in checkmod.preset_facts("ch06.near_nic_rate"))
    assert hardware.model("gpt2_xl").params == 1_557_611_200    # the tracing leaves the tables as they were
    assert type(hardware.MODELS) is dict


@pytest.mark.parametrize("qid, model, count", [("ch00.bert_large_ring_ms", "bert_large", 340_000_000),
                                               ("ch00.gpt2xl_adam_gb", "gpt2_xl", 1_500_000_000),
                                               ("ch02.gpt2xl_ms", "gpt2_xl", 1_500_000_000)])
def test_an_answer_from_a_rounded_parameter_count_is_told_to_use_the_exact_one(qid, model, count):
    from commlib import hardware

    exact = hardware.model(model).params
    wrong = expected(qid) * count / exact      # these answers grow as the parameter count
    message = check(qid, wrong).message
    assert "a rounded count: use the exact count given" in message and f"{exact:,}".replace(",", "\u2009") in message


def test_a_text_names_presets_by_their_names_and_the_usual_short_forms():
    from commlib import hardware

    def keys(text):
        return [r.key for r in checkmod.presets_named(text)]

    assert keys("16 ranks of 100 Gb/s\nEthernet, then Ethernet 100 Gb/s again") == ["eth_100g"]
    assert keys("NVLink 4.0 (H100, 18 links) between H100s") == ["nvlink4", "h100"]   # the longest name first
    assert keys("InfiniBand NDR 4x ($\\alpha$ = 1 µs), NDR InfiniBand, HDR InfiniBand") == ["ib_ndr", "ib_hdr"]
    assert keys("GPT-2 XL and BERT-Large on NVLink 2.0 and PCIe 4.0") == ["gpt2_xl", "bert_large", "nvlink2", "pcie4_x16"]
    assert keys("a 1100 Gb/s Ethernet, NVLink 50, GH100, 100 Gb/s, NVLink") == []      # no part of a word or number
    assert keys("the ResNet-50 example on 25 Gb/s Ethernet") == ["resnet50", "eth_25g"]
    # every record can be named by its own name
    for table in (hardware.MODELS, hardware.LINKS, hardware.ACCELERATORS):
        for record in table.values():
            assert checkmod.presets_named(f"On {record.name}, predict.") == [record], record.key
    assert checkmod.record_facts([hardware.link("eth_100g")] * 2) == [
        "Ethernet 100 Gb/s: sold as 100 Gb/s; a message's start-up latency is \u03b1 = 5 \u00b5s."]


def test_the_bytes_ratio_alone_is_not_the_hierarchical_speedup():
    right = expected("ch02.hier_speedup")
    bytes_only = (31 / 32) / (3 / 4)
    assert abs(bytes_only / right - 1) < 0.01            # within the usual 1 %: the question must be tighter
    result = check("ch02.hier_speedup", bytes_only)
    assert not result.correct and "bytes ratio" in result.message and "start-ups count too" in result.message
    assert check("ch02.hier_speedup", round(right, 2)).correct


def test_the_slips_the_notebooks_invite_get_their_own_hints():
    """Each computed here, from the exercise's numbers, the way the slip makes it."""
    from commlib import hardware
    from commlib.collectives import compare
    from commlib.today import algorithm_choice as tuning

    # ch02: NVLink 2.0 at the 300 GB/s it is sold as (both directions) instead of 150 GB/s a direction
    nvlink, eth = hardware.link("nvlink2"), hardware.link("eth_25g")
    nbytes = hardware.gradient_bytes("resnet50", "fp16")
    times = [compare.allreduce_seconds(alg, nbytes, 32, 300e9, nvlink.latency, hosts=4, inter_bandwidth=eth.bandwidth,
                                       inter_latency=eth.latency, nics_per_host=k, links_per_rank=1)
             for alg, k in (("ring", None), ("hierarchical", 1))]
    sold = times[0] / times[1]
    assert abs(sold / expected("ch02.hier_speedup") - 1) > 0.003          # outside the tolerance
    assert "adds both directions" in check("ch02.hier_speedup", round(sold, 3)).message
    # ch07: the tree's bus bandwidth converted as a ring's, x n/(2(n-1)), not halved
    mach = tuning.machine("one_gpu_per_node")
    ring, tree = (tuning.predict("all_reduce", a, "Simple", 0.0, mach) for a in ("ring", "tree"))
    n = mach.ranks
    as_ring = (ring.latency - tree.latency) / (1 / (2 * tree.algbw * n / (2 * (n - 1))) - 1 / ring.algbw) / 1e6
    assert "NCCL halves a tree's" in check("ch07.tree_ring_mb", round(as_ring, 1)).message
    # ch07: the tree's bus bandwidth taken as its algorithm bandwidth: above the ring's, no crossover (negative)
    unhalved = (ring.latency - tree.latency) / (1 / (2 * tree.algbw) - 1 / ring.algbw) / 1e6
    assert unhalved < 0 and "NCCL halves a tree's" in check("ch07.tree_ring_mb", round(unhalved, 1)).message
    # ch07: an 800 Gb/s card gives an H100 only its PCIe 5.0 x16 host link's rate; the card's own rate is a slip
    from commlib.today import zero
    h100 = hardware.accelerator("h100")
    host, card = hardware.link(h100.host_link), hardware.link("ib_xdr")
    assert card.bandwidth > host.bandwidth and hardware.network_rate("h100", "ib_xdr") == host.bandwidth

    def x_star(rate):
        c, g = zero.forward_layer_times(7_500_000_000, 32, 64, 4096, h100.peak_flops, rate, per_node=8,
                                        node_bandwidth=hardware.link("nvlink4").bandwidth)
        return 4096 * g / c
    assert check("ch07.break_even_tokens", x_star(host.bandwidth)).correct
    # NVLink sets the time at 800 Gb/s, cap or no cap, so the cap moves x* little (the fastest form changes with it)
    assert x_star(card.bandwidth) < x_star(host.bandwidth)
    assert "PCIe 5.0 x16" in check("ch07.break_even_tokens", x_star(card.bandwidth)).message

    def x_series(rate):
        c, g = zero.forward_layer_times(7_500_000_000, 32, 64, 4096, h100.peak_flops, rate, per_node=8,
                                        node_bandwidth=hardware.link("nvlink4").bandwidth, form="phases in series")
        return 4096 * g / c
    assert x_series(card.bandwidth) < x_series(host.bandwidth) / 1.1
    assert "one after the other" in check("ch07.break_even_tokens", x_series(host.bandwidth)).message
    # ch08: alpha / beta, the 1/n dropped, on the exercise's numbers and on a student's own
    assert "That is alpha / beta" in check("ch08.balance_kb", 10e-6 * 2e9 / 1e3).message
    own = draw("ch08.balance_kb", "s2024-0117")
    assert "That is alpha / beta" in check("ch08.balance_kb", own["alpha_us"] * 1e-6 * 2e9 / 1e3, **own).message


def test_a_ratio_that_barely_depends_on_the_count_gets_no_rounded_count_hint():
    """ch02.hier_speedup is a ratio of two times: a rounded count moves it by a fraction of a per cent, so a near miss
    is not explained by one."""
    from commlib.check import expected
    right = expected("ch02.hier_speedup")
    for factor in (1.004, 0.996):
        assert "rounded count" not in str(check("ch02.hier_speedup", right * factor))


@pytest.mark.parametrize("answer, words", [(math.nan, "not a number (NaN)"), (math.inf, "infinite (inf)"),
                                           (-math.inf, "infinite (-inf)")])
def test_an_answer_that_is_not_a_finite_number_is_told_so_not_given_a_generic_hint(answer, words):
    for qid in ("ch00.gbe_bytes", "ch08.ring_steps"):
        result = check(qid, answer)
        assert not result.correct
        assert result.message.startswith(f"Not yet: your answer is {words}."), result.message


def test_a_count_is_checked_exactly_not_within_a_tolerance():
    """1 % of 134 workers (top-k at 0.5 %) would accept 133 and 135; a count is exact, and a fraction of one is named."""
    from commlib.check import draw

    assert check("ch08.ring_steps", 6).correct and check("ch08.ring_steps", 6.0).correct
    refused = check("ch08.ring_steps", 6.05)
    assert not refused.correct and refused.message.startswith("Not yet. The answer is a whole number of Sendrecv calls")
    crossover = expected("ch07.topk_crossover_n", percent=0.5)
    assert crossover > 100, crossover        # where 1 % is more than one worker
    assert check("ch07.topk_crossover_n", crossover, percent=0.5).correct
    for wrong in (crossover - 1, crossover + 1):
        assert not check("ch07.topk_crossover_n", wrong, percent=0.5).correct, wrong
    assert draw("ch07.topk_crossover_n", "s1")    # variants still drawn


@pytest.mark.parametrize("n, mib", [(8, 64), (4, 16), (16, 128), (64, 256)])
def test_the_pipelined_chain_exercise_names_each_slip_for_every_variant(n, mib):
    """The best q with alpha halved is sqrt 2 times the best q at the book's alpha; q unchanged, q doubled, and q
    halved or cut by sqrt 2 each get their own hint, for the book's numbers and for drawn ones."""
    from commlib import hardware
    from commlib.collectives.algorithms import chain
    link = hardware.link("eth_25g")
    givens = {} if (n, mib) == (8, 64) else {"n": n, "mib": mib}
    before = chain.real_best_chunks(mib * 2**20, n, link.bandwidth, link.latency)
    right = expected("ch01.chain_q_half_alpha", **givens)
    assert right == pytest.approx(math.sqrt(2) * before)
    assert check("ch01.chain_q_half_alpha", right, **givens).correct
    for wrong, words in ((before, "chapter's start-up"), (2 * before, "does not double"), (before / 2, "grows"),
                         (before / math.sqrt(2), "grows")):
        result = check("ch01.chain_q_half_alpha", wrong, **givens)
        assert not result.correct and words in result.message, (n, mib, result.message)

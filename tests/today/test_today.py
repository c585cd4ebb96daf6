"""Chapter 7's models: each closed form against its executable simulation, and input validation."""

import math

import numpy as np
import pytest

from commlib import cost, hardware, units
from commlib.today import algorithm_choice as tuning
from commlib.today import calculators as today_calculators
from commlib.today import compression, moe, zero
from commlib.today import in_network as innetwork
from commlib.today import local_sgd as localsgd
from commlib.views import today as today_views


# --- the four contract functions -------------------------------------------------------------
@pytest.mark.parametrize("stage", [0, 1, 2, 3])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_zero_bytes_match_executed_collectives(stage, n):
    rng = np.random.default_rng(stage + 10 * n)
    length = 60 * n
    sent, ok = zero.zero_step(stage, [rng.normal(size=length) for _ in range(n)])
    assert ok
    assert sent == [cost.zero_bytes_per_rank(length, n, stage, "fp64")] * n


def test_zero_stage3_is_one_and_a_half_times_and_large_n_limits():
    assert cost.zero_bytes_per_rank(10**9, 1000, 3) / cost.zero_bytes_per_rank(10**9, 1000, 2) == 1.5
    assert math.isclose(cost.zero_bytes_per_rank(10**9, 10**6, 0), 2 * 2 * 10**9, rel_tol=1e-5)


@pytest.mark.parametrize("tokens,hidden,top_k,experts", [(8, 3, 1, 4), (64, 16, 2, 8), (12, 5, 3, 6)])
def test_moe_bytes_match_executed_all_to_all(tokens, hidden, top_k, experts):
    received, sent = moe.dispatch(tokens, hidden, top_k, experts)
    assert sent == [cost.moe_all_to_all_bytes(tokens, hidden, top_k, experts, "fp64")] * experts
    assert all(r.shape == (tokens * top_k, hidden) for r in received)


def test_moe_uniform_random_routing_matches_formula_on_average():
    loads = moe.expert_loads(400, 2, 8, skew=0.0, seed=3)
    assert loads.sum() == 400 * 2 * 8
    assert moe.imbalance(loads) < 1.15
    assert moe.imbalance(moe.expert_loads(400, 2, 8, skew=1.0, seed=3)) > 1.5


@pytest.mark.parametrize("n", [2, 4, 8])
def test_in_network_time_matches_star_simulation_and_ring_control(n):
    link = hardware.link("nvlink4")
    m = 4 * 2**20
    assert math.isclose(innetwork.switch_allreduce_time(n, m), cost.in_network_allreduce_time(m, n, link.bandwidth))
    assert math.isclose(innetwork.ring_on_star_time(n, m), cost.allreduce_time(m, n, link.bandwidth), rel_tol=1e-6)


def test_switch_allreduce_sums_and_sends_m_once():
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 100, size=50) for _ in range(5)]
    res, sent = innetwork.switch_allreduce(arrays)
    assert all((r == np.sum(arrays, axis=0)).all() for r in res)
    assert sent == [arrays[0].nbytes] * 5


def test_busbw_exceeds_link_only_for_the_switch():
    r = innetwork.busbw_ideal(8, 100.0)
    assert math.isclose(r["ring_busbw"], 100.0) and r["switch_busbw"] > 100.0
    g = innetwork.measured_gain()
    assert 1.0 < g["measured"] < g["ideal"]


def test_powersgd_numbers_match_the_factors_sent():
    rng = np.random.default_rng(0)
    m, n, r = 21, 10, 2
    p, q = rng.normal(size=(m, r)), rng.normal(size=(n, r))
    assert p.size + q.size == cost.powersgd_numbers(m, n, r)


@pytest.mark.parametrize("call,name", [
    (lambda: cost.zero_bytes_per_rank(0, 4, 1), "params"),
    (lambda: cost.zero_bytes_per_rank(10, 0, 1), "n"),
    (lambda: cost.zero_bytes_per_rank(10, 4, 4), "stage"),
    (lambda: cost.zero_bytes_per_rank(10, 4, 1, dtype="fp7"), "dtype"),
    (lambda: cost.moe_all_to_all_bytes(10, 4, 9, 8), "top_k"),
    (lambda: cost.moe_all_to_all_bytes(-1, 4, 1, 8), "tokens"),
    (lambda: cost.in_network_allreduce_time(1e6, 8, 0.0), "bandwidth"),
    (lambda: cost.in_network_allreduce_time(1e6, 8, 1e9, latency=-1), "latency"),
    (lambda: cost.powersgd_numbers(4, 4, 5), "rank"),
    (lambda: today_calculators.chooser_results("nope"), "machine"),
    (lambda: today_calculators.chooser_results(size="12 parsecs"), "size"),
    (lambda: compression.train_compressed("zip", 0.1), "method"),
    (lambda: localsgd.run(0, 0.1, 1), "h"),
    (lambda: tuning.crossovers("all_reduce", "pcie_node", smallest=0), "smallest"),
    (lambda: tuning.crossovers("all_reduce", "pcie_node", rtol=2), "rtol"),
    (lambda: tuning.crossovers("all_reduce", "pcie_node", per_octave=0), "per_octave"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the chooser ----------------------------------------------------------------------------------
def test_chooser_latency_protocol_small_bandwidth_protocol_large():
    for key in tuning.MACHINES:
        small, large = tuning.choose("all_reduce", 1024, key), tuning.choose("all_reduce", 2**31, key)
        assert small.protocol == "LL" and large.protocol == "Simple"


def test_chooser_rules():
    assert tuning.predict("all_reduce", "pat", "Simple", 1e6, tuning.machine("one_gpu_per_node")) is None
    assert tuning.predict("all_gather", "pat", "Simple", 1e6, tuning.machine("nvswitch_node")) is None
    assert tuning.predict("all_reduce", "nvls", "LL", 1e6, tuning.machine("nvswitch_node")) is None
    assert tuning.predict("all_reduce", "nvls", "Simple", 1e6, tuning.machine("pcie_node")) is None
    # LL128 where NCCL 2.30.7 enables it: NVLink inside the node, or one GPU a node; not over PCIe
    assert tuning.predict("all_reduce", "ring", "LL128", 1e6, tuning.machine("pcie_node")) is None
    for key in ("nvswitch_node", "one_gpu_per_node"):
        assert tuning.predict("all_gather", "ring", "LL128", 1e6, tuning.machine(key)) is not None
    assert tuning.predict("all_gather", "tree", "Simple", 1e6, tuning.machine("one_gpu_per_node")) is None
    ll = tuning.predict("all_reduce", "ring", "LL", 1e9, tuning.machine("pcie_node"))
    simple = tuning.predict("all_reduce", "ring", "Simple", 1e9, tuning.machine("pcie_node"))
    assert math.isclose(ll.algbw * 2, simple.algbw)


@pytest.mark.parametrize("collective,key", [
    ("all_reduce", "nvswitch_node"), ("all_gather", "one_gpu_per_node"), ("all_reduce", "pcie_node"),
    ("all_reduce", "one_gpu_per_node"), ("all_gather", "nvswitch_node"),
])
def test_crossovers_bracket_each_change_of_pick(collective, key):
    mach = tuning.machine(key)
    xs = tuning.crossovers(collective, key, smallest=64, largest=2.0**31)
    assert xs

    def pick(nbytes):
        c = tuning.choose(collective, nbytes, key)
        return c.algorithm, c.protocol

    for x in xs:
        # the pick differs on either side of the reported crossover, and the bracket is tight
        assert pick(x.low) == x.below != x.above == pick(x.high)
        assert 0 < x.high / x.low - 1 <= 1e-3 and x.low < x.size < x.high
        # the two entries' predicted times (linear in M) meet inside the bracket
        a, b = (tuning.predict(collective, *pair, 1.0, mach) for pair in (x.below, x.above))
        meet = (b.latency - a.latency) / (1 / a.algbw - 1 / b.algbw)
        assert x.low <= meet <= x.high
    # no change is missed: the picks at both ends and between crossovers are the ones reported
    assert pick(64) == xs[0].below and pick(2.0**31) == xs[-1].above
    for x, y in zip(xs, xs[1:]):
        assert x.above == y.below and x.high < y.low
    bounds = [64.0] + [v for x in xs for v in (x.low, x.high)] + [2.0**31]
    for lo, hi in zip(bounds[::2], bounds[1::2]):
        assert len({pick(lo * (hi / lo) ** (i / 200)) for i in range(201)}) == 1


def test_choices_table_lists_each_pick_once_in_order_with_its_crossovers():
    text = today_views.choices_table([("nvswitch_node", "all_reduce"), ("pcie_node", "all_gather")]).data
    xs = tuning.crossovers("all_reduce", "nvswitch_node")
    row = next(line for line in text.splitlines() if "all-reduce" in line)
    picks = " → ".join("/".join(p) for p in [xs[0].below] + [x.above for x in xs])
    assert picks in row and all(today_views.size_text(x.size) in row for x in xs)
    assert len(text.splitlines()) == 4          # a header, its rule and one row per case


def test_crossover_is_finer_than_a_power_of_two_grid():
    # PAT's last power of two is 1 MiB, but the change (to ring/LL128) lies near 1.9 MiB
    x = tuning.crossovers("all_gather", "one_gpu_per_node")[0]
    assert x.below == ("pat", "Simple")
    last_pat = max(s for s, a, _ in tuning.winners("all_gather", [2.0**k for k in range(6, 32)], "one_gpu_per_node")
                   if a == "pat")
    assert last_pat <= x.low < 2 * last_pat and x.high / x.low < 1.01


def test_nvls_speeds_up_all_reduce_only_as_nccl_models_it():
    mach = tuning.machine("nvswitch_node")
    n, b, eff = mach.ranks, mach.bandwidth, tuning.NCCL_QUOTED["nvls_efficiency_hopper"]
    ring = {c: tuning.predict(c, "ring", "Simple", 2**30, mach).algbw for c in tuning.COLLECTIVES}
    nvls = {c: tuning.predict(c, "nvls", "Simple", 2**30, mach).algbw for c in tuning.COLLECTIVES}
    # all-reduce: NCCL's efficiency times the maintainer's B n / (n + 1), above the ring's B n / (2(n - 1))
    assert math.isclose(nvls["all_reduce"], eff * innetwork.nvls_algbw(n, b))
    assert nvls["all_reduce"] > ring["all_reduce"]
    # all-gather and reduce-scatter: no bus-to-algorithm conversion, (p - 1)/p twice, well below the ring
    for c in ("all_gather", "reduce_scatter"):
        assert math.isclose(nvls[c], b * n / (n + 1) * eff * ((n - 1) / n) ** 2)
        assert nvls[c] < 0.6 * ring[c]
        assert all(a != "nvls" for _, a, _ in tuning.winners(c, [2.0**k for k in range(6, 34)], mach))


def test_tree_and_pat_bandwidth_follow_nccl_factors_and_conversion():
    mach = tuning.machine("one_gpu_per_node")
    b, q = mach.bandwidth, tuning.NCCL_QUOTED
    tree = {p: tuning.predict("all_reduce", "tree", p, 1e6, mach).algbw for p in tuning.PROTOCOLS}
    assert math.isclose(tree["Simple"], 0.5 * 0.92 * b)                     # halved, not n / (2(n - 1))
    assert math.isclose(tree["LL"], tree["Simple"] / 3.8)
    assert math.isclose(tree["LL128"], tree["Simple"] * 120 / 128)         # across nodes; 7/9 inside one
    assert math.isclose(tuning.predict("all_gather", "pat", "Simple", 1e6, mach).algbw, q["pat_factor"] * b)


def test_ll_bus_bandwidth_is_capped_where_nccl_caps_it():
    q = tuning.NCCL_QUOTED
    nvs, net = tuning.machine("nvswitch_node"), tuning.machine("one_gpu_per_node")
    assert nvs.bandwidth * q["ll_factor"] > nvs.ll_cap                      # the cap binds: 185 GB/s against 141
    assert math.isclose(tuning.bus_bandwidth("all_reduce", "ring", "LL", nvs), q["ll_max_bw_hopper_one_node"])
    assert math.isclose(tuning.bus_bandwidth("all_gather", "ring", "LL", net), q["ll_max_bw_intel_many_nodes"])
    assert tuning.bus_bandwidth("all_gather", "ring", "LL128", nvs) == nvs.bandwidth * q["ll128_factor"]   # LL only


def test_pat_latency_grows_linearly_with_ranks():
    import dataclasses
    base = tuning.machine("one_gpu_per_node")
    lat = {n: tuning.predict("all_gather", "pat", "Simple", 0, dataclasses.replace(base, ranks=n, nodes=n)).latency
           for n in (16, 32)}
    hop = tuning.PROTOCOLS["Simple"][1] + base.hop_latency
    assert math.isclose(lat[32] - lat[16], 16 * tuning.NCCL_QUOTED["pat_latency_per_rank"] + hop)


def test_tuning_and_cost_import_no_numpy():
    import subprocess
    import sys
    code = ("import sys; import commlib.today.algorithm_choice, commlib.cost; "
            "bad = [m for m in ('numpy', 'matplotlib', 'ipywidgets') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- training runs --------------------------------------------------------------------------------
def test_compression_bytes_formula():
    run = compression.train_compressed("powersgd", 0.5, steps=5, rank=2)
    assert run.bytes_per_step == 2 * 3 / 4 * cost.powersgd_numbers(21, 10, 2) * 4
    assert compression.step_bytes("topk", 21, 10, 4, k=21) == 3 * 21 * 8


def test_local_sgd_runs_stop_by_the_budget_on_the_slowest_workers_clock():
    budget = 0.15
    runs = [localsgd.best_over_grid(h, budget, lrs=(0.5,)) for h in (1, 4, 16)] + [localsgd.large_batch(16, budget, lrs=(2.0,))]
    for r in runs:
        assert r.times[-1] <= budget and len(r.times) > 2
    # the round that was cut would have ended past the budget: a run with one more round allowed goes past it
    r = localsgd.run(16, 0.5, rounds=len(runs[2].times), jitter=0.2)
    assert r.times[-1] > budget


def test_large_batch_step_lasts_as_long_as_h_local_steps():
    # without stragglers a step of H batches takes H steps' compute, as H local steps do
    one = localsgd.run(1, 1.0, rounds=3, batch=64, micro=16, jitter=0.0)
    local = localsgd.run(16, 0.5, rounds=3, jitter=0.0)
    assert np.allclose(one.times, local.times)
    # with stragglers its step is the sum of H draws, not one draw scaled by H: its spread shrinks like H's
    big = localsgd.run(1, 1.0, rounds=200, batch=64, micro=16, workers=1, comm=0.0)
    steps = np.diff(big.times) / (16 * localsgd.COMPUTE)
    assert abs(steps.mean() - (1 + localsgd.JITTER)) < 0.02 and steps.std() < 2 * localsgd.JITTER / 16**0.5


def test_local_steps_equal_the_worker_by_worker_loop():
    from commlib.today.book_problem import default_problem
    from commlib.today.local_sgd import _local_steps
    p = default_problem()
    w = np.linspace(-0.1, 0.1, p.dim)
    got = _local_steps(p, w, np.random.default_rng(3), 5, 3, 16, 0.5)
    rng = np.random.default_rng(3)
    for i in range(3):
        wi = w.copy()
        for _ in range(5):
            wi -= 0.5 * p.stochastic_gradient(wi, rng, 16)
        assert np.allclose(got[i], wi, rtol=1e-12, atol=1e-14)


def test_expert_loads_follow_sampling_without_replacement():
    # top-2 of 8 by Zipf popularity (skew 1): expert 0 is picked with probability p0 + sum_j p_j p0 / (1 - p_j)
    pop = 1 / np.arange(1, 9)
    pop /= pop.sum()
    chance = pop[0] + sum(pop[j] * pop[0] / (1 - pop[j]) for j in range(1, 8))
    loads = sum(moe.expert_loads(2000, 2, 8, skew=1.0, seed=s) for s in range(3))
    assert loads.sum() == 3 * 2000 * 8 * 2
    assert abs(loads[0] / (3 * 2000 * 8) - chance) < 0.01


def test_local_sgd_bytes_per_sample_fall_by_h():
    one, many = localsgd.run(1, 0.5, 2), localsgd.run(8, 0.5, 2)
    assert math.isclose(one.bytes_per_sample / many.bytes_per_sample, 8)


# --- views ----------------------------------------------------------------------------------------
def test_views_draw_and_calculator_reports_errors():
    today_views.chooser_figure()
    today_views.zero_figure(10**9, 8)
    today_views.loads_figure({0.0: np.ones(4), 1.0: np.arange(4)})
    today_views.compression_figure({"none": compression.train_compressed("none", 0.5, steps=10, eval_every=5)})
    today_views.local_sgd_figure({"H = 1": localsgd.run(1, 0.5, 3)})
    calc = today_views.chooser_calculator()
    assert calc.results["winner"] == "nvls / Simple"
    assert calc.set(size="lots").error.startswith("message M: cannot read")


def test_local_sgd_figure_draws_a_row_per_group_and_names_each_line_once_a_panel():
    runs = {"H = 1": localsgd.run(1, 0.5, 3), "H = 4": localsgd.run(4, 0.5, 3), "H = 16": localsgd.run(16, 0.5, 3)}
    fig = today_views.local_sgd_figure(runs, 0.5, groups={"a": ("H = 1", "H = 4"), "b": ("H = 4", "H = 16")})
    assert len(fig.axes) == 4                                     # two rows of two panels
    for ax, names in zip(fig.axes, (("H = 1", "H = 4"),) * 2 + (("H = 4", "H = 16"),) * 2):
        texts = sorted(t.get_text() for t in ax.texts if t.get_text() != "budget")
        assert texts == sorted(names)
    colours = {t.get_text(): t.get_color() for ax in fig.axes for t in ax.texts}
    assert colours["H = 1"] == "black"                            # the control keeps its colour in every row
    with pytest.raises(ValueError, match="groups"):
        today_views.local_sgd_figure(runs, groups={"a": ("H = 64",)})


def test_prefetch_never_slower_and_bounded_by_compute_and_gathers():
    rng = np.random.default_rng(4)
    for _ in range(20):
        c, g = rng.uniform(0, 2, size=6), rng.uniform(0, 2, size=6)
        t = zero.prefetch_times(c, g)
        assert t["prefetched"] <= t["serial"] + 1e-12
        assert t["prefetched"] >= max(c.sum(), g.sum()) - 1e-12
    with pytest.raises(ValueError, match="compute and gather"):
        zero.prefetch_times([1.0], [])


def test_link_loads_switch_m_each_way_ring_two_n_minus_one_over_n():
    loads = innetwork.link_loads(8, 2**16)
    assert loads["switch"] == {"up": 2.0**16, "down": 2.0**16}
    assert loads["ring"]["up"] == loads["ring"]["down"] == 2 * 7 / 8 * 2**16
    today_views.link_loads_figure(loads, 2**16)


def test_sharding_calculator_and_numpy_free_compute():
    r = today_calculators.sharding_results("gpt2_xl", 64, 3, "bf16", "ib_ndr")
    assert r["against plain data parallelism"] == "1.50 x"
    with pytest.raises(ValueError, match="stage"):
        today_calculators.sharding_results(stage=4)
    with pytest.raises(ValueError, match="model"):
        today_calculators.sharding_results(model="nope")
    # the ZeRO paper's 7.5 B model does not fit one GPU unsharded, and does once its optimizer state is sharded
    fits = next(k for k in r if k.startswith("fits one"))
    big = {st: today_calculators.sharding_results("zero_paper_7_5b", 64, st)[fits] for st in (0, 1)}
    assert big[0].startswith("no: 1.4 times") and big[1] == "yes"
    calc = today_views.sharding_calculator()
    assert calc.results["against plain data parallelism"] == "1.50 x"
    assert calc.set(model="zero_paper_7_5b", stage=0).results[fits].startswith("no")
    calc.set(model="gpt2_xl", stage=3)
    # an H100 reaches its card over PCIe 5.0 x16: XDR's 100 GB/s is capped to the host link, NDR's 50 GB/s is not
    rate = today_calculators.RATE_ROW
    ndr = calc.set(link="ib_ndr").results
    assert "capped" not in ndr[rate] and ndr[rate].startswith(units.format_rate(hardware.link("ib_ndr").bandwidth))
    xdr = calc.set(link="ib_xdr").results
    host = hardware.link(hardware.accelerator(today_calculators.FIT_GPU).host_link)
    assert hardware.link("ib_xdr").bandwidth > host.bandwidth
    assert xdr[rate].startswith(units.format_rate(host.bandwidth)) and f"capped by the H100 SXM5's {host.name}" in xdr[rate]
    sent = today_calculators.zero_bytes_per_rank(hardware.model("gpt2_xl").params, 64, 3, "bf16")
    assert xdr["time on the link (bandwidth term)"] == units.format_time(sent / host.bandwidth)
    calc.set(link="ib_ndr")
    assert calc.set(n=1).results["against plain data parallelism"] == "no traffic (n = 1)"
    import subprocess
    import sys
    code = "import sys, commlib.today.calculators; print('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_size_text_rounds_to_significant_digits_with_binary_prefixes():
    assert today_views.size_text(1568609.4) == "1.5 MiB"
    assert today_views.size_text(15.84e6) == "15 MiB"
    assert today_views.size_text(679917.0) == "660 KiB"
    assert today_views.size_text(3 * 2**30, digits=3) == "3.00 GiB"
    with pytest.raises(ValueError, match="nbytes"):
        today_views.size_text(0)


@pytest.mark.parametrize("size", ["1 KiB", "64 KiB", "64 MiB"])
def test_chooser_algbw_is_the_message_over_the_predicted_time(size):
    """nccl-tests' algbw is M over the time, at every size; the bandwidth term's rate is shown apart."""
    from commlib.units import parse_size
    r = today_calculators.chooser_results("nvswitch_node", "all_reduce", size)
    algbw = float(r["algorithm bandwidth M / time (algbw)"].split()[0]) * 1e9
    value, unit = r["predicted time"].split()
    seconds = float(value) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]
    assert algbw == pytest.approx(parse_size(size) / seconds, rel=2e-2)
    assert algbw <= float(r[today_calculators.BALG_LABEL].split()[0]) * 1e9 * 1.001


def test_the_zero_state_is_checked_against_one_gpus_memory():
    from commlib import cost, hardware
    gpu = hardware.accelerator("h100")
    assert gpu.memory == 80 * 2**30
    # 7.5 B parameters on 64 GPUs: 120 GB unsharded, 31.9 GB at stage 1; a 1 B model fits unsharded (16 GB)
    assert cost.fitting_stages(7_500_000_000, 64, gpu.memory) == (1, 2, 3)
    assert cost.fitting_stages(10**9, 64, gpu.memory) == (0, 1, 2, 3)
    assert cost.fitting_stages(10**12, 8, gpu.memory) == ()
    with pytest.raises(ValueError, match="memory"):
        cost.fitting_stages(10**9, 8, 0)
    words = today_views.zero_fit_words(7_500_000_000, 64, gpu)
    assert "120 GB" in words and "80 GiB (86 GB)" in words and "does not fit without sharding" in words and "stage 1 on" in words
    assert "fits without sharding" in today_views.zero_fit_words(10**9, 64, gpu)
    assert "nor at any stage" in today_views.zero_fit_words(10**12, 8, gpu)
    with pytest.raises(ValueError, match="memory"):
        today_views.zero_fit_words(10**9, 8, hardware.accelerator("a100"))
    fig = today_views.zero_figure(7_500_000_000, 64, gpu=gpu)
    assert any(abs(line.get_ydata()[0] - gpu.memory / 1e9) < 1e-9 for line in fig.axes[0].get_lines())
    assert today_calculators.sharding_results("gpt2_xl", 1, 0)["fits one H100 SXM5 (80 GiB)?"] == "yes"


def test_the_calculator_says_how_far_a_state_overflows_the_gpu(monkeypatch):
    import dataclasses

    from commlib import hardware
    small = dataclasses.replace(hardware.accelerator("h100"), memory=10 * 2**30)
    monkeypatch.setitem(hardware.ACCELERATORS, "h100", small)
    r = today_calculators.sharding_results("gpt2_xl", 1, 0)      # 1,557,611,200 x 16 B = 24.9 GB
    assert r["fits one H100 SXM5 (10 GiB)?"] == "no: 2.3 times its memory"


def test_the_chooser_figure_marks_every_change_of_pick():
    from commlib.today import algorithm_choice as tuning
    fig = today_views.chooser_figure()
    for ax, key in zip(fig.axes, ("nvswitch_node", "one_gpu_per_node", "pcie_node")):
        dots = [c for c in ax.collections if len(c.get_offsets())]
        changes = tuning.crossovers("all_reduce", key, 2.0**6, 2.0**31)
        assert sum(len(c.get_offsets()) for c in dots) == len(changes) > 0


@pytest.mark.parametrize("n", [2, 8, 64])
def test_nvls_steps_carry_n_plus_one_over_n_of_m_each_way_the_load_behind_its_algbw(n):
    steps = innetwork.nvls_step_bytes(n, 1.0)
    assert [d for d, _, _ in steps] == ["up", "down", "up", "down"]
    for way in ("up", "down"):
        load = sum(b for d, b, _ in steps if d == way)
        assert math.isclose(load, (n + 1) / n)
        assert math.isclose(1e9 / load, innetwork.nvls_algbw(n, 1e9))
    with pytest.raises(ValueError, match="n"):
        innetwork.nvls_step_bytes(1)


def test_nvls_steps_figure_labels_each_arrow_with_its_bytes():
    import matplotlib.pyplot as plt

    fig = today_views.nvls_steps_figure(8)
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_text() in ("M", "M/n")]
    assert labels == ["M", "M/n", "M/n", "M"]
    plt.close(fig)
    # each step's words say what its arrow's bytes say: the whole buffer (or every share) for M, one share for M/n
    for _, whole, what in innetwork.NVLS_STEPS:
        assert ("whole buffer" in what or "every share" in what) == whole, what


def test_the_chooser_says_why_b_alg_exceeds_the_link_for_gathers_only():
    gather = today_calculators.chooser_results("pcie_node", "reduce_scatter", "1 GiB")[today_calculators.BALG_LABEL]
    reduce = today_calculators.chooser_results("pcie_node", "all_reduce", "1 GiB")[today_calculators.BALG_LABEL]
    assert "above the link's B" in gather and "(n - 1)/n" in gather
    assert "above" not in reduce


def test_nccls_two_corrections_pull_the_tree_ring_crossover_opposite_ways_and_the_trees_win():
    # NCCL 2.30.7: the ring's plateau alone moves it later, the trees' factors alone earlier; both: about half the
    # chooser's 33 MB (the referee's 17 MB), at 16 MiB where the tree's factor for Simple rises from 0.6 to 0.7
    from commlib.today import algorithm_choice as tuning
    chooser = next(x for x in tuning.crossovers("all_reduce", "one_gpu_per_node") if x.above == ("ring", "Simple"))
    base = tuning.tree_ring_crossover_corrected(tree_factors=False, ring_plateau=False)
    assert base == pytest.approx(chooser.size, rel=0.02)
    assert tuning.tree_ring_crossover_corrected(tree_factors=False) > base
    assert tuning.tree_ring_crossover_corrected(ring_plateau=False) < base
    both = tuning.tree_ring_crossover_corrected()
    assert both == pytest.approx(16 * 2**20, rel=0.02) and 0.4 < both / base < 0.6


def test_prefetch_schedule_ends_when_prefetch_times_says_and_keeps_one_gather_in_flight():
    rng = np.random.default_rng(3)
    for _ in range(20):
        c, g = rng.uniform(0, 2, 6), rng.uniform(0, 2, 6)
        times = zero.prefetch_times(c, g)
        for pre, total in ((True, times["prefetched"]), (False, times["serial"])):
            rows = zero.prefetch_schedule(c, g, prefetch=pre)
            assert math.isclose(rows[-1]["compute_end"], total)
            for a, b in zip(rows, rows[1:]):
                assert b["gather_start"] >= a["gather_end"] - 1e-12      # one gather at a time
                assert b["compute_start"] >= a["compute_end"] - 1e-12    # one compute at a time
            assert all(r["compute_start"] >= r["gather_end"] - 1e-12 for r in rows)   # a layer waits for its weights
    fig = today_views.prefetch_timeline_figure({"a": ([2e-3] * 4, [1e-3] * 4), "b": ([1e-3] * 4, [3e-3] * 4)})
    assert len(fig.axes) == 2
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_the_8x8_gather_is_timed_in_the_fastest_form_priced():
    """The chapter's 8 nodes x 8 H100s layout: forward_layer_times takes the fastest of the forms node_gather_times
    prices, the in-series hierarchical gather is not it (NVLink 450 GB/s < 64 cards x 50 GB/s), and the two other
    forms agree with chapter 2's all-reduce models halved (an all-gather is half an all-reduce's bytes)."""
    from commlib.collectives.algorithms import hierarchical, multi_rail_ring
    h100, nvl = hardware.accelerator("h100"), hardware.link("nvlink4").bandwidth
    for rate in (hardware.network_rate("h100", "ib_ndr"), hardware.network_rate("h100", "ib_xdr")):
        for node_bw in (nvl, tuning.machine("nvswitch_node").bandwidth):
            layer_bytes = 7_500_000_000 / 32 * 2
            times = zero.node_gather_times(layer_bytes, 64, 8, rate, node_bw)
            assert set(times) == set(zero.GATHER_FORMS)
            _, chosen = zero.forward_layer_times(7_500_000_000, 32, 64, 4096, h100.peak_flops, rate, per_node=8,
                                                 node_bandwidth=node_bw)
            assert chosen == min(times.values())
            assert min(times, key=times.get) != "phases in series"
            ring = multi_rail_ring.seconds(layer_bytes, 64, node_bw, 0.0, 0.0, hosts=8, inter_bandwidth=rate,
                                           rails=8) / 2
            assert times["multi-rail ring"] == pytest.approx(ring, rel=1e-12)
            piped = hierarchical.pipelined_hierarchical_allreduce_time(layer_bytes, 8, 8, node_bw, rate,
                                                                       chunks=10_000) / 2
            assert times["phases overlapped"] == pytest.approx(piped, rel=1e-3)
    with pytest.raises(ValueError, match="form"):
        zero.forward_layer_times(10**9, 8, 64, 4096, 1e15, 50e9, per_node=8, node_bandwidth=450e9, form="tree")


def test_rounds_in_budget_shares_the_sync_over_h_steps():
    assert localsgd.rounds_in_budget(1, 0.5, 1.2e-3, 4e-3) == 96
    assert localsgd.rounds_in_budget(16, 0.5, 1.2e-3, 4e-3) == 21
    assert localsgd.rounds_in_budget(4, 0.1, 0.025, 0.0) == 1          # exactly one round fits
    with pytest.raises(ValueError, match="h"):
        localsgd.rounds_in_budget(0, 0.5, 1e-3, 4e-3)
    with pytest.raises(ValueError, match="budget"):
        localsgd.rounds_in_budget(1, -1.0, 1e-3, 4e-3)

"""commlib.step.cost: traffic per recipe, compute time from FLOPs, the compute-bound condition, calculators."""

import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from commlib import cost, hardware
from commlib.step import calculators as step_calculators
from commlib.step import cost as step


@pytest.mark.parametrize("n", [2, 4, 8, 64])
def test_traffic_hand_worked(n):
    psi = 1_000_000
    ring = 2 * (n - 1) / n
    assert step.traffic_per_rank(psi, "allreduce", n, "bf16").sent == pytest.approx(ring * psi * 2)
    assert step.traffic_per_rank(psi, "allreduce", n, "fp32").sent == pytest.approx(ring * psi * 4)
    ps = step.traffic_per_rank(psi, "parameter_server", n, "fp32", servers=2)
    assert ps.received == pytest.approx(psi * 4) and ps.server == pytest.approx(n * psi * 4 / 2)
    assert step.traffic_per_rank(psi, "zero3", n, "bf16").sent == pytest.approx(1.5 * ring * psi * 2)
    assert step.traffic_per_rank(psi, "allreduce", n).server is None
    # the bf16 all-reduce agrees with the cost model's ring volume
    assert step.traffic_per_rank(psi, "allreduce", n, "bf16").sent == pytest.approx(
        cost.ring_bytes_per_rank(2 * psi, n))


def test_traffic_single_rank_and_bad_input():
    assert step.traffic_per_rank(10, "zero3", 1).sent == 0
    for kwargs, name in (({"recipe": "zero4"}, "recipe"), ({"params": 0}, "params"), ({"n": 0}, "n"),
                         ({"dtype": "int3"}, "dtype"), ({"servers": 0}, "servers")):
        args = {"params": 10, "recipe": "allreduce", "n": 2, **kwargs}
        with pytest.raises(ValueError, match=f"^{name} must"):
            step.traffic_per_rank(**args)


def test_required_bandwidth_with_start_ups_grows_without_bound_and_stops_at_the_limit():
    m, t_c, eff, alpha = 553.36e6, 0.55, 0.9, 50e-6
    limit = step.largest_ranks_for_efficiency(t_c, eff, alpha)
    need = [step.required_bandwidth(m, n, t_c, eff, alpha) for n in (4, 16, 100, 400, limit)]
    assert need == sorted(need) and need[-1] < float("inf")
    assert step.required_bandwidth(m, limit + 1, t_c, eff, alpha) == float("inf")
    # with that bandwidth the ring meets the target exactly (the control: the efficiency it was asked for)
    for n in (4, 400):
        b = step.required_bandwidth(m, n, t_c, eff, alpha)
        assert step.parallel_efficiency(t_c, cost.allreduce_time(m, n, b, alpha)) == pytest.approx(eff)
    assert step.largest_ranks_for_efficiency(t_c, eff, 0.0) is None


def test_compute_time_hand_worked():
    assert step.training_flops(1e9, 1) == 6e9
    assert step.compute_time(6e12, 1e15, 0.5) == pytest.approx(0.012)
    with pytest.raises(ValueError, match="utilization"):
        step.compute_time(1, 1e12, 0)
    with pytest.raises(ValueError, match="peak_flops"):
        step.compute_time(1, 0, 0.5)


@given(params=st.floats(1e6, 1e11), n=st.integers(2, 1024), gbs=st.floats(1, 1000),
       u=st.floats(0.05, 1.0), s=st.sampled_from([1, 2, 4]))
def test_min_tokens_is_where_compute_meets_communication(params, n, gbs, u, s):
    peak = 1e15
    x = step.min_tokens_compute_bound(params, n, gbs * 1e9, peak, u, s)
    t_c = step.compute_time(step.training_flops(params, x), peak, u)
    t_m = cost.allreduce_time(params * s, n, gbs * 1e9)
    assert t_c == pytest.approx(t_m, rel=1e-9)
    # without latency the parameter count cancels: x_min = (n-1)/n F s / (3 B)
    assert x == pytest.approx((n - 1) / n * peak * u * s / (3 * gbs * 1e9), rel=1e-9)


def test_batch_for_time_meets_a_hierarchical_all_reduce_and_refuses_bad_input():
    """The batch whose compute lasts a given all-reduce's time: the compute time it gives is that time."""
    m, nv4, ib = hardware.gradient_bytes("gpt2_xl", "bf16"), hardware.link("nvlink4"), hardware.link("ib_ndr")
    t_m = cost.hierarchical_allreduce_time(m, 8, 8, nv4.bandwidth, ib.bandwidth, nv4.latency, ib.latency)
    params, peak = hardware.model("gpt2_xl").params, hardware.accelerator("h100").peak_flops
    x = step.batch_for_time(t_m, params, peak, 0.4)
    assert step.compute_time(step.training_flops(params, x), peak, 0.4) == pytest.approx(t_m, rel=1e-12)
    # the flat ring over the same cards needs a larger batch: only a GPU's share of the gradient crosses each card
    assert step.min_tokens_compute_bound(params, 64, ib.bandwidth, peak, 0.4, 2, ib.latency) > 4 * x
    for bad in ({"t_comm": -1.0}, {"utilization": 0.0}, {"flops_per_sample": 0.0}):
        args = {"t_comm": t_m, "params": params, "peak_flops": peak, "utilization": 0.4} | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            step.batch_for_time(**args)


def test_acks_take_a_share_of_the_outgoing_wire():
    framing = hardware.TCP_OVER_ETHERNET
    # one ACK per segment costs more than one per two; both leave less than headers alone
    assert framing.payload_share_with_acks(1) < framing.payload_share_with_acks(2) < framing.payload_share
    # an ACK carries headers only: with the timestamps option 70 bytes of frame; without it, padded to the shortest frame
    assert framing.ack_wire == 20 + 32 + 14 + 4 + 8 + 12
    assert hardware.Framing(tcp_header=20).ack_wire == framing.min_frame + framing.preamble + framing.interframe_gap
    for bad in (0, 1.5):
        with pytest.raises(ValueError, match="segments_per_ack"):
            framing.payload_share_with_acks(bad)


def test_reduction_bounds_order_and_hand_case():
    lo, hi = step.reduction_time_bounds(1e6, 2, 1e9, 0.0, 1e-10)
    assert (lo, hi) == pytest.approx((1e-3, 1.05e-3))
    # arithmetic slower than the wire: the fused bound is the arithmetic
    lo, hi = step.reduction_time_bounds(1e6, 2, 1e9, 0.0, 1e-8)
    assert lo == pytest.approx(5e-3) and hi == pytest.approx(6e-3)


def test_allreduce_results_matches_the_cost_model():
    out = step_calculators.allreduce_results("vgg16", "fp32", 4, "eth_1g")
    link = hardware.link("eth_1g")
    seconds = cost.allreduce_time(hardware.gradient_bytes("vgg16"), 4, link.bandwidth, link.latency)
    assert out["time of one all-reduce"] == f"{seconds:.2f} s"
    assert "time, reduction fused into the copy" not in out
    out = step_calculators.allreduce_results("resnet50", "fp32", 8, "nvlink2", "ring", 900)
    assert "time, reduction fused into the copy" in out
    with pytest.raises(ValueError, match=r"memory \(GB/s\)"):
        step_calculators.allreduce_results(memory_gbs=-1)
    with pytest.raises(ValueError, match="unknown link"):
        step_calculators.allreduce_results(link="carrier_pigeon")


def test_step_results_flags_compute_bound_by_the_threshold():
    base = dict(model="gpt2_xl", accelerator="h100", utilization_pct=40, n=64, link="ib_ndr", dtype="bf16")
    r = step_calculators.step_results(batch=1, **base)
    x_min = float(r["smallest batch per rank with T_c >= T_m"].split()[0].replace(",", ""))
    x_bwd = float(r[step_calculators.BACKWARD_ROW].split()[0].replace(",", ""))
    assert x_bwd == pytest.approx(1.5 * x_min, rel=1e-3)       # the backward pass is 4 of the 6 FLOPs
    assert step_calculators.step_results(batch=int(x_bwd * 1.1), **base)[step_calculators.OVERLAP_ROW] == "yes"
    # between x_min and 1.5 x_min: T_c >= T_m, yet the backward pass is too short to hide the all-reduce
    assert step_calculators.step_results(batch=int(x_min * 1.2), **base)[step_calculators.OVERLAP_ROW] == "no"
    with pytest.raises(ValueError, match=r"utilization \(%\)"):
        step_calculators.step_results(utilization_pct=0)
    with pytest.raises(ValueError, match=r"batch per rank \(samples\)"):
        step_calculators.step_results(batch=0)


@pytest.mark.parametrize("model", list(hardware.MODELS))
def test_step_calculator_charges_each_model_its_own_flops_per_sample(model):
    """No calculator time for a CNN that disagrees with its per-sample FLOPs (6 x forward MACs per image)."""
    out = step_calculators.step_results(model, "v100", 40, 256, 8, "nvlink2", "fp32")
    item, chip = hardware.model(model), hardware.accelerator("v100")
    expected = 256 * item.training_flops_per_sample / (0.4 * chip.peak_flops)
    shown = out["compute time T_c"]
    value, unit = shown.split()
    assert float(value) * {"s": 1, "ms": 1e-3, "µs": 1e-6}[unit] == pytest.approx(expected, rel=0.01), shown
    assert out["smallest batch per rank with T_c >= T_m"].endswith(f"{item.sample}s")
    if item.sample == "image":   # a CNN reuses each weight at every position: far more than 6 FLOPs per parameter
        assert item.training_flops_per_sample > 10 * 6 * item.params


def test_resnet50_on_a_v100_against_the_layer_model():
    """The referee's case: ResNet-50, 256 images on a V100 at 40 %: about 126 ms, as the layer tables give."""
    from commlib.sgd import overlap
    out = step_calculators.step_results("resnet50", "v100", 40, 256, 8, "nvlink2", "fp32")
    t_fwd, t_bwd = overlap.step_compute_time("resnet50", 256, 0.4 * hardware.accelerator("v100").peak_flops)
    assert float(out["compute time T_c"].split()[0]) * 1e-3 == pytest.approx(t_fwd + t_bwd, rel=0.01)


@pytest.mark.parametrize("link", [k for k in step_calculators.SWITCHED_LINK_KEYS if hardware.link(k).kind == "bus"])
def test_calculators_refuse_ranks_beyond_one_host_on_every_bus(link):
    """NVLink up to its largest shipped domain, PCIe up to the generic bound: the one bound chapter 2's hosts use."""
    item = hardware.link(link)
    most = item.gpus_per_host
    assert most == (item.max_ranks or hardware.GENERIC_GPUS_PER_HOST)
    assert step_calculators.allreduce_results(n=most, link=link)["time of one all-reduce"]
    assert step_calculators.step_results(n=most, link=link)["all-reduce time T_m"]
    for call in (lambda: step_calculators.allreduce_results(n=most + 1, link=link),
                 lambda: step_calculators.step_results(n=most + 1, link=link)):
        with pytest.raises(ValueError, match=rf"^ranks n must be at most {most} over {re.escape(item.name)}: "):
            call()
    # control: a network card sets no such limit
    assert step_calculators.allreduce_results(n=1024, link="ib_ndr")["time of one all-reduce"]


def test_a_link_with_no_switch_is_not_offered_and_refused_as_chapter_1_refuses_it():
    """Referee M1: NVLink 1.0 (the DGX-1's cube mesh) has no NVSwitch, so no full rate to any peer."""
    from commlib.collectives import calculators as collective_calculators
    assert "nvlink1" in step_calculators.LINK_KEYS and "nvlink1" not in step_calculators.SWITCHED_LINK_KEYS
    assert set(step_calculators.SWITCHED_LINK_KEYS) <= set(collective_calculators.PRIMITIVE_LINKS)
    for call in (lambda: step_calculators.allreduce_results("resnet50", "fp32", 8, "nvlink1"),
                 lambda: step_calculators.step_results(n=8, link="nvlink1")):
        with pytest.raises(ValueError, match=r"^link: NVLink 1.0 .* joins fixed peers directly"):
            call()
    # control: NVLink 2.0 behind an NVSwitch is timed
    assert step_calculators.allreduce_results("resnet50", "fp32", 8, "nvlink2")["time of one all-reduce"]


def test_the_socket_link_is_not_offered_and_refused_by_its_control():
    assert "upi" in hardware.LINKS and "upi" not in step_calculators.LINK_KEYS
    for call in (lambda: step_calculators.allreduce_results("resnet50", "fp32", 8, "upi"),
                 lambda: step_calculators.step_results(n=8, link="upi")):
        with pytest.raises(ValueError, match=r"^link: Intel UPI .* joins CPU sockets, not GPUs"):
            call()


def test_step_imports_no_numpy():
    code = ("import sys; sys.modules['numpy'] = None; import commlib.step.calculators as s; "
            "print(s.step_results()[s.OVERLAP_ROW], s.allreduce_results()['gradient size'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the same answers as with numpy at hand (the default step, a B200's, cannot hide its all-reduce: "no")
    want = f"{step_calculators.step_results()[step_calculators.OVERLAP_ROW]} " \
           f"{step_calculators.allreduce_results()['gradient size']}\n"
    assert out.stdout == want and want.startswith("no ")


def test_reduction_shares_against_the_bounds():
    step_module = step
    nv2, gamma = hardware.link("nvlink2"), cost.reduction_gamma(hardware.accelerator("v100").memory_bandwidth)
    fused, serial = step_module.reduction_shares(1e8, 8, nv2.bandwidth, nv2.latency, gamma)
    lo, hi = step_module.reduction_time_bounds(1e8, 8, nv2.bandwidth, nv2.latency, gamma)
    plain = cost.allreduce_time(1e8, 8, nv2.bandwidth, nv2.latency)
    assert serial == pytest.approx((hi - plain) / hi) and fused == pytest.approx((lo - plain) / lo)
    assert 0 <= fused < serial < 1
    with pytest.raises(ValueError, match="gamma"):
        step_module.reduction_shares(1e8, 8, nv2.bandwidth, nv2.latency, -1.0)



@pytest.mark.parametrize("pct", [0, -5, 100.5, 4000])
def test_step_results_names_the_percent_range(pct):
    with pytest.raises(ValueError, match=r"utilization \(%\) must .*100"):
        step_calculators.step_results(utilization_pct=pct)
    assert step_calculators.step_results(utilization_pct=100)[step_calculators.OVERLAP_ROW] in ("yes", "no")


def test_one_gpu_has_nothing_to_send_in_the_words_of_chapter_2s_calculator():
    from commlib.collectives import calculators as collectives_calculators

    out = step_calculators.allreduce_results("vgg16", "fp32", 1, "eth_1g")
    assert out["time of one all-reduce"] == step_calculators.NOTHING_TO_SEND.format("GPU")
    assert collectives_calculators.NOTHING_TO_SEND is step_calculators.NOTHING_TO_SEND     # one wording, one place
    assert not any(text.startswith("0") or "ns" in text for text in out.values())


def test_step_results_say_none_at_one_gpu_as_the_allreduce_calculator_does():
    one = step_calculators.step_results(n=1)
    said = step_calculators.allreduce_results("gpt2_xl", "bf16", 1, "ib_ndr")["time of one all-reduce"]
    assert said == step_calculators.NOTHING_TO_SEND.format("GPU")
    for row in ("all-reduce time T_m", "smallest batch per rank with T_c >= T_m", step_calculators.BACKWARD_ROW):
        assert one[row] == said, row
    assert "none" not in step_calculators.step_results(n=2)["smallest batch per rank with T_c >= T_m"]

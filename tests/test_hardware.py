"""commlib.hardware: presets carry sources, units are one direction in bytes/s."""

import math

import pytest

from commlib import hardware

REQUIRED_LINKS = ["pcie3_x16", "pcie4_x16", "pcie5_x16", "nvlink1", "nvlink2", "nvlink3", "nvlink4", "upi",
                  "eth_1g", "eth_10g", "eth_25g", "eth_100g", "eth_200g", "eth_400g", "ib_edr", "ib_hdr", "ib_ndr"]
REQUIRED_MODELS = ["alexnet", "resnet50", "vgg16", "inception_v3", "bert_base", "bert_large", "gpt2",
                   "gpt2_medium", "gpt2_large", "gpt2_xl"]


def test_every_required_preset_exists_with_a_source():
    assert set(REQUIRED_LINKS) <= set(hardware.LINKS)
    assert set(REQUIRED_MODELS) <= set(hardware.MODELS)
    for item in list(hardware.LINKS.values()) + list(hardware.MODELS.values()):
        assert item.source and item.citation


def test_citations_exist_in_the_bibliography():
    from pathlib import Path
    bib = (Path(__file__).parents[1] / "references.bib").read_text(encoding="utf-8")
    for item in list(hardware.LINKS.values()) + list(hardware.MODELS.values()):
        assert "{" + item.citation + "," in bib, item.citation
    for item in hardware.LINKS.values():
        if item.domain_citation:
            assert "{" + item.domain_citation + "," in bib, item.domain_citation


def test_every_nvlink_bounds_a_host_by_its_domain_and_the_others_by_the_stated_bound():
    for item in hardware.LINKS.values():
        if item.key.startswith("nvlink"):
            assert item.max_ranks >= 8 and item.domain and item.domain_citation, item.key
            assert str(item.max_ranks) in item.domain      # the domain's description names its size
            assert item.gpus_per_host == item.max_ranks
        else:
            assert item.max_ranks == 0 and not item.domain, item.key
            assert item.gpus_per_host == hardware.GENERIC_GPUS_PER_HOST


@pytest.mark.parametrize("key, gbit", [("eth_1g", 1), ("eth_10g", 10), ("eth_25g", 25), ("eth_100g", 100),
                                       ("eth_200g", 200), ("eth_400g", 400), ("ib_edr", 100), ("ib_hdr", 200),
                                       ("ib_ndr", 400)])
def test_network_links_are_bits_over_eight(key, gbit):
    assert hardware.LINKS[key].bandwidth == pytest.approx(gbit * 1e9 / 8)


@pytest.mark.parametrize("key, both", [("nvlink1", 160e9), ("nvlink2", 300e9), ("nvlink3", 600e9),
                                       ("nvlink4", 900e9)])
def test_nvlink_vendor_figures_are_both_directions(key, both):
    item = hardware.LINKS[key]
    assert item.both_directions == pytest.approx(both)
    assert "both directions" in item.note


def test_pcie_generations_double():
    b3, b4, b5 = (hardware.LINKS[k].bandwidth for k in ("pcie3_x16", "pcie4_x16", "pcie5_x16"))
    assert b4 == pytest.approx(2 * b3) and b5 == pytest.approx(2 * b4)
    assert 15.7e9 < b3 < 15.8e9   # 8 GT/s x 16 lanes x 128/130 / 8 bits
    b6, b7 = (hardware.LINKS[k].bandwidth for k in ("pcie6_x16", "pcie7_x16"))
    assert b7 == pytest.approx(2 * b6)


def test_every_pcie_row_follows_one_convention():
    """Per direction, x16, bytes offered to TLPs: 128b/130b out for gens 3-5, the flit's non-TLP bytes for 6-7."""
    rows = [item for key, item in hardware.LINKS.items() if key.startswith("pcie")]
    assert [r.key for r in rows] == ["pcie3_x16", "pcie4_x16", "pcie5_x16", "pcie6_x16", "pcie7_x16"]
    for item in rows:
        assert hardware.PCIE_CONVENTION in item.note, item.key
        gen = int(item.key[4])
        lanes_rate = {3: 8, 4: 16, 5: 32, 6: 64, 7: 128}[gen] * 1e9 * 16 / 8     # raw bytes/s per direction
        share = 128 / 130 if gen <= 5 else (256 - 6 - 8 - 6) / 256                 # flit: 236 of 256 bytes are TLP
        assert item.payload_share == pytest.approx(share)
        assert item.bandwidth == pytest.approx(lanes_rate * share), item.key
    assert hardware.link("pcie6_x16").bandwidth == pytest.approx(118e9)
    assert hardware.link("pcie7_x16").bandwidth == pytest.approx(236e9)
    assert "PCIE_CONVENTION" not in hardware.__doc__ and "236 bytes of TLP" in hardware.__doc__


def test_cnn_multiply_accumulates_agree_with_the_layer_count():
    """torchvision's 'GFLOPS' are multiply-accumulates: the book's own layer tables give the same counts."""
    from commlib.sgd import overlap
    for key in ("alexnet", "resnet50", "vgg16"):
        item = hardware.model(key)
        assert item.forward_macs == pytest.approx(overlap.forward_macs(key), rel=0.01), key
        assert item.training_flops_per_sample == pytest.approx(6 * overlap.forward_macs(key), rel=0.01)
    for key in ("gpt2", "gpt2_xl", "bert_large"):
        item = hardware.model(key)
        assert item.sample == "token" and item.training_flops_per_sample == 6 * item.params
    for item in hardware.MODELS.values():
        assert item.forward_macs > 0 and item.macs_source and item.sample


def test_exact_parameter_counts():
    assert hardware.MODELS["resnet50"].params == 25_557_032
    assert hardware.MODELS["vgg16"].params == 138_357_544


def test_bytes_per_parameter():
    assert hardware.dtype_bytes("fp32") == 4 and hardware.dtype_bytes("bf16") == 2
    assert sum(hardware.TRAINING_STATE_BYTES["mixed_adam"].values()) == 16
    assert hardware.gradient_bytes("vgg16", "fp32") == 4 * 138_357_544
    assert hardware.training_state_bytes("gpt2", "mixed_adam") == 16 * hardware.MODELS["gpt2"].params


@pytest.mark.parametrize("call, word", [
    (lambda: hardware.link("ethernet"), "link"),
    (lambda: hardware.model("resnet51"), "model"),
    (lambda: hardware.dtype_bytes("fp12"), "dtype"),
    (lambda: hardware.training_state_bytes("gpt2", "lion"), "recipe"),
])
def test_unknown_keys_list_the_choices(call, word):
    with pytest.raises(ValueError, match=f"unknown {word}.*choose one of"):
        call()


LINKS_2026 = {"nvlink5": 1.8e12, "nvlink6": 3.6e12, "pcie6_x16": 256e9, "pcie7_x16": 512e9, "eth_800g": 100e9,
              "ib_xdr": 100e9}


def test_links_of_2026_exist_with_their_quoted_figures():
    for key, quoted in LINKS_2026.items():
        item = hardware.link(key)
        assert item.quoted == pytest.approx(quoted)
        assert item.date >= "2022"
    assert hardware.link("nvlink5").bandwidth == pytest.approx(900e9)       # 1.8 TB/s, both directions summed
    assert hardware.link("nvlink6").bandwidth == pytest.approx(1.8e12)      # 3.6 TB/s, both directions summed
    assert hardware.link("pcie6_x16").bandwidth == pytest.approx(118e9)     # 256 GB/s x16 both ways; 236/256 TLP
    assert hardware.link("pcie7_x16").bandwidth == pytest.approx(236e9)     # 512 GB/s x16 both ways; 236/256 TLP
    assert hardware.link("eth_800g").bandwidth == pytest.approx(800e9 / 8)
    assert hardware.link("ib_xdr").bandwidth == pytest.approx(800e9 / 8)    # 800 Gb/s per port


def test_every_link_has_a_source_a_date_and_a_consistent_quoted_figure():
    for item in hardware.LINKS.values():
        assert item.source and item.citation and item.date, item.key
        assert 1990 <= int(item.date[:4]) <= 2026, item.key
        # one direction = the quoted figure, halved when the vendor sums both directions, times what the
        # line code or the flit leaves to packets
        one_way = item.quoted / 2 if item.quoted_both else item.quoted
        assert 0.9 < item.payload_share <= 1, item.key
        assert item.bandwidth == pytest.approx(one_way * item.payload_share), item.key
        assert ("both directions summed" in item.note) == item.quoted_both, item.key
        assert item.both_directions == pytest.approx(2 * item.bandwidth)


def test_newer_generations_are_faster():
    order = [["pcie3_x16", "pcie4_x16", "pcie5_x16", "pcie6_x16", "pcie7_x16"],
             ["nvlink1", "nvlink2", "nvlink3", "nvlink4", "nvlink5", "nvlink6"],
             ["eth_100g", "eth_200g", "eth_400g", "eth_800g"], ["ib_edr", "ib_hdr", "ib_ndr", "ib_xdr"]]
    for family in order:
        rates = [hardware.link(k).bandwidth for k in family]
        assert rates == sorted(rates) and len(set(rates)) == len(rates)


def test_model_counts_cite_their_implementation_apart_from_the_paper():
    for item in hardware.MODELS.values():
        assert item.count_citation in {"torchvision2016", "wolf2020transformers"}
        assert item.count_citation != item.citation
    from pathlib import Path
    bib = (Path(__file__).parents[1] / "references.bib").read_text(encoding="utf-8")
    for key in {m.count_citation for m in hardware.MODELS.values()} | {a.citation for a in
                                                                       hardware.ACCELERATORS.values()}:
        assert "{" + key + "," in bib


def test_nvlink_domains_are_bounded_and_only_nvlink_has_one():
    sizes = {key: item.max_ranks for key, item in hardware.LINKS.items() if item.max_ranks}
    # the largest NVLink domain of a shipped system: DGX-1, DGX-2, two HGX A100 baseboards, DGX GH200, the NVL72 racks
    assert sizes == {"nvlink1": 8, "nvlink2": 16, "nvlink3": 16, "nvlink4": 256, "nvlink5": 72, "nvlink6": 72}
    for key in sizes:
        assert "Domain:" in hardware.link(key).note


def test_rubin_scale_out_is_two_800g_cards_not_one_of_1600g():
    for key in ("eth_800g", "ib_xdr"):
        item = hardware.link(key)
        assert "two such cards" in item.note and item.bandwidth == pytest.approx(800e9 / 8)
    assert not any(item.bandwidth == pytest.approx(1600e9 / 8) for item in hardware.LINKS.values() if item.kind == "network")


def test_accelerators():
    assert hardware.accelerator("h100").peak_flops == pytest.approx(989.4e12)
    # the B200 quoted dense (half of NVIDIA's 2:4-sparse 4.5 PFLOP/s); its cards sit behind PCIe Gen5 in a DGX B200
    b200 = hardware.accelerator("b200")
    assert b200.peak_flops == pytest.approx(2.25e15) and b200.dtype == "bf16"
    assert hardware.host_cap("b200", "ib_xdr").key == "pcie5_x16" and hardware.host_cap("b200", "ib_ndr") is None
    # its successor keeps the dense bf16 rate and reaches an 800 Gb/s card over PCIe 6.0, which does not cap it
    assert hardware.accelerator("b300").peak_flops == b200.peak_flops and hardware.host_cap("b300", "ib_xdr") is None
    with pytest.raises(ValueError, match="unknown accelerator"):
        hardware.accelerator("tpu")


def test_jia_et_al_author_list():
    from pathlib import Path
    bib = (Path(__file__).parents[1] / "references.bib").read_text(encoding="utf-8")
    entry = bib[bib.index("{jia2018highly,"):]
    entry = entry[: entry.index("\n}")]
    assert "Hu, Guangxiao" in entry and "Guangzhong" not in entry


def test_only_socket_links_are_marked_as_not_joining_gpus():
    apart = {key for key, item in hardware.LINKS.items() if not item.joins_gpus}
    assert apart == {"upi"} and "CPU sockets" in hardware.link("upi").note


def test_a_gpu_gets_no_more_from_a_network_card_than_its_host_link_carries():
    """H100 on XDR: the card offers 100 GB/s, PCIe 5.0 x16 carries 63.02, so the cap binds; on NDR (50) it does not."""
    pcie5 = hardware.link("pcie5_x16").bandwidth
    assert hardware.accelerator("h100").host_link == "pcie5_x16"
    assert hardware.link("ib_xdr").bandwidth > pcie5 > hardware.link("ib_ndr").bandwidth
    assert hardware.host_cap("h100", "ib_xdr").key == "pcie5_x16"
    assert hardware.network_rate("h100", "ib_xdr") == pcie5
    assert hardware.host_cap("h100", "ib_ndr") is None
    assert hardware.network_rate("h100", "ib_ndr") == hardware.link("ib_ndr").bandwidth
    # links that join GPUs directly are not behind the host's PCIe
    assert hardware.network_rate("h100", "nvlink4") == hardware.link("nvlink4").bandwidth
    for chip in hardware.ACCELERATORS.values():
        assert hardware.link(chip.host_link).kind == "bus"


def test_the_step_calculator_applies_the_host_cap():
    from commlib.step import calculators
    from commlib.step import cost as step_cost
    xl, h100 = hardware.model("gpt2_xl"), hardware.accelerator("h100")
    capped = calculators.step_results("gpt2_xl", "h100", 40, 8192, 64, "ib_xdr", "bf16")
    x_pcie = step_cost.min_tokens_compute_bound(xl.params, 64, hardware.link("pcie5_x16").bandwidth, h100.peak_flops,
                                                0.4, 2, hardware.link("ib_xdr").latency)
    assert capped["smallest batch per rank with T_c >= T_m"] == f"{math.ceil(x_pcie):,} tokens"
    assert "PCIe 5.0 x16" in capped[calculators.RATE_ROW]
    assert "capped" not in calculators.step_results("gpt2_xl", "h100", 40, 8192, 64, "ib_ndr", "bf16")[calculators.RATE_ROW]

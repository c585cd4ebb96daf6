"""commlib.hardware: presets carry sources, units are one direction in bytes/s."""

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

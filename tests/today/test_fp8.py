"""FP8 (e4m3) on the wire: the codec against a brute-force nearest value, and FSDP's FP8 all-gather on real arrays."""

import numpy as np
import pytest

from commlib import cost
from commlib.today import fp8, zero


def _grid():
    """Every finite e4m3 value, decoded from all 256 bytes."""
    codes = np.arange(256, dtype=np.uint8)
    values = fp8.decode(codes)
    keep = ~np.isnan(values)
    return codes[keep], values[keep]


def test_the_format_has_the_published_range_and_round_trips():
    codes, values = _grid()
    assert len(codes) == 254                               # 2 NaN patterns, no infinities (the "fn" variant)
    assert values.max() == fp8.E4M3_MAX == 448.0
    assert np.min(values[values > 0]) == 2.0 ** -9         # the smallest subnormal
    assert np.min(values[codes == 8]) == 2.0 ** -6         # the smallest normal
    assert np.array_equal(fp8.encode(values), codes)       # -0 included
    positive = np.sort(values[(values > 0)])
    assert len(np.unique(positive)) == 126 and np.all(np.diff(positive) > 0)


def test_encode_picks_the_nearest_value_ties_to_even():
    codes, values = _grid()
    nonneg = values[codes < 128]
    rng = np.random.default_rng(5)
    x = rng.normal(size=4000) * rng.choice([1e-3, 1e-1, 1.0, 30.0, 300.0], size=4000)
    got = fp8.decode(fp8.encode(x))
    a = np.minimum(np.abs(x), fp8.E4M3_MAX)
    best = np.abs(a[:, None] - nonneg[None, :]).min(axis=1)
    assert np.array_equal(np.abs(np.abs(got) - a), best)
    assert np.array_equal(np.signbit(got), np.signbit(x))
    # exact midpoints go to the value with the even mantissa
    assert fp8.decode(fp8.encode([1.0625, 1.1875, 2.0 ** -10, 3 * 2.0 ** -10])).tolist() == \
        [1.0, 1.25, 0.0, 2.0 ** -8]


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="values"):
        fp8.encode([1.0, np.nan])
    with pytest.raises(ValueError, match="codes"):
        fp8.decode(np.array([1, 2]))
    with pytest.raises(ValueError, match="amax"):
        fp8.tensorwise_scale(-1.0)
    with pytest.raises(ValueError, match="scale"):
        fp8.cast_tensorwise([1.0], 0.0)


def test_a_scaled_cast_keeps_the_relative_error_of_three_mantissa_bits():
    rng = np.random.default_rng(2)
    w = rng.normal(size=10_000) * 0.02
    scale = fp8.tensorwise_scale(np.max(np.abs(w)))
    back = fp8.cast_tensorwise(w, scale)
    normal = np.abs(w * scale) >= 2.0 ** -6
    assert np.max(np.abs(back[normal] - w[normal]) / np.abs(w[normal])) <= 2.0 ** -4
    assert np.max(np.abs(back)) == np.max(np.abs(w)) * 448 / 448     # the largest maps onto 448 and back exactly


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_fsdp_fp8_gather_bytes_match_the_formula_and_round_nothing_more(n):
    rng = np.random.default_rng(40 + n)
    length = 60 * n
    params = rng.normal(size=length)
    sent, ok = zero.zero_step(3, [rng.normal(size=length) for _ in range(n)], params=params, fp8_gather=True)
    assert ok
    fp64 = cost.zero_bytes_per_rank(length, n, 3, "fp64")
    want = cost.zero_bytes_per_rank(length, n, 3, "fp64", gather=cost.FP8_TENSORWISE)
    assert sent == [want] * n and want < fp64
    assert want == (n - 1) / n * length * (2 * 1 + 8)


def test_shards_cast_with_their_own_scales_would_not_match_the_whole_tensors_cast():
    # why the ranks agree on one scale first: a shard cast with its own amax decodes to other values
    rng = np.random.default_rng(9)
    params = np.concatenate([rng.normal(size=40) * 0.01, rng.normal(size=40) * 10])
    own = [fp8.cast_tensorwise(s, fp8.tensorwise_scale(np.max(np.abs(s)))) for s in np.array_split(params, 2)]
    whole = fp8.cast_tensorwise(params, fp8.tensorwise_scale(np.max(np.abs(params))))
    assert not np.array_equal(np.concatenate(own), whole)
    assert zero.zero_step(3, [rng.normal(size=80) for _ in range(2)], params=params, fp8_gather=True)[1]


def test_the_gather_check_fails_when_the_bytes_are_not_the_whole_tensors_cast(monkeypatch):
    rng = np.random.default_rng(11)
    params, grads = rng.normal(size=90), [rng.normal(size=90) for _ in range(3)]
    assert zero.zero_step(3, grads, params=params, fp8_gather=True)[1]
    all_gather = zero.collectives.all_gather

    def one_byte_off(arrays):                       # rank 0 receives one wrong byte (a code one step up)
        out, trace = all_gather(arrays)
        out[0] = out[0].copy()
        out[0][7] += 1
        return out, trace

    monkeypatch.setattr(zero.collectives, "all_gather", one_byte_off)
    assert not zero.zero_step(3, grads, params=params, fp8_gather=True)[1]


def test_fp8_gather_inputs_are_checked():
    with pytest.raises(ValueError, match="fp8_gather"):
        zero.zero_step(2, [np.zeros(4)] * 2, fp8_gather=True)
    with pytest.raises(ValueError, match="gather"):
        cost.zero_bytes_per_rank(100, 4, 1, gather=cost.FP8_TENSORWISE)
    with pytest.raises(ValueError, match="gather"):
        cost.zero_bytes_per_rank(100, 4, 3, gather="fp8")
    with pytest.raises(ValueError, match="reduce_bytes"):
        zero.backward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9, reduce_bytes=0)


def test_an_fp8_gather_moves_the_backward_break_even_less_than_the_forward():
    # forward: the gather halves; backward: gather in FP8 but reduce-scatter in bf16, 3/4 of the bf16 traffic
    kw = dict(params=32 * 10**8, layers=32, n=64, tokens=4096, peak_flops=1e15, bandwidth=50e9)
    cf, gf = zero.forward_layer_times(**kw)
    cf8, gf8 = zero.forward_layer_times(**kw, dtype_bytes=1)
    cb, gb = zero.backward_layer_times(**kw)
    cb8, gb8 = zero.backward_layer_times(**kw, dtype_bytes=1, reduce_bytes=2)
    assert cf8 == cf and cb8 == cb
    assert np.isclose(gf8 / gf, 0.5) and np.isclose(gb8 / gb, 0.75)


def test_the_gather_check_fails_when_the_ranks_agree_on_a_wrong_scale(monkeypatch):
    # the reference comes from the whole tensor's own amax, so an agreement on rank 0's amax alone must fail
    rng = np.random.default_rng(12)
    params = np.concatenate([rng.normal(size=45) * 0.01, rng.normal(size=45) * 10])   # rank 0's shard is small
    grads = [rng.normal(size=90) for _ in range(2)]
    assert zero.zero_step(3, grads, params=params, fp8_gather=True)[1]
    allreduce = zero.collectives.allreduce

    def rank0_amax(arrays, **kw):
        out, trace = allreduce(arrays, **kw)
        return [np.array(arrays[0], dtype=float) for _ in out], trace

    monkeypatch.setattr(zero.collectives, "allreduce", rank0_amax)
    assert not zero.zero_step(3, grads, params=params, fp8_gather=True)[1]


def test_recomputation_adds_the_forwards_compute_to_the_backward():
    kw = dict(params=32 * 10**8, layers=32, n=64, tokens=4096, peak_flops=1e15, bandwidth=50e9)
    cf, gf = zero.forward_layer_times(**kw)
    cb, gb = zero.backward_layer_times(**kw)
    cr, gr = zero.backward_layer_times(**kw, recompute=True)
    assert np.isclose(cr, cb + cf) and gr == gb

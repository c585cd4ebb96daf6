r"""FP8 (e4m3) on the wire: one byte a value, and a scale that makes the range fit.

An e4m3 number has a sign bit, 4 exponent bits (bias 7) and 3 mantissa bits: 8 values from
each power of two up to the next, from :math:`2^{-9}` (the smallest subnormal) to 448 (the largest,
:data:`E4M3_MAX`; the format keeps no infinities, and its one pattern of all ones is NaN). So few
values cover a tensor only after it is *scaled*: multiplied by ``s = 448 / amax``, its largest
magnitude lands on the format's largest, cast to the nearest e4m3 value, and divided by ``s`` by
whoever reads it. With one scale for the whole tensor (*tensorwise*, as in torchao's float8
training), every rank that holds a shard must use the same ``s``: they agree on it by an
all-reduce (max) of their shards' amax, and then casting each shard is the same as casting the
whole tensor, which is what lets FSDP all-gather the weights already in FP8 (see
:func:`commlib.today.zero.zero_step`).

:func:`encode` gives the byte (``uint8``) of each value's nearest e4m3 number, ties to the even
one, as IEEE rounding does; :func:`decode` reads it back. numpy has no FP8 type, so both work on
the bit fields.

>>> decode(encode([0.0, 1.0, 1.1, 1.0625, 1.1875, 448.0, 500.0, -0.003])).tolist()
[0.0, 1.0, 1.125, 1.0, 1.25, 448.0, 448.0, -0.00390625]
"""

from __future__ import annotations

import numpy as np

__all__ = ["E4M3_MAX", "AMAX_FLOOR", "encode", "decode", "tensorwise_scale", "cast_tensorwise"]

#: The largest finite e4m3 value: exponent field 15, mantissa 110, :math:`1.75 \times 2^8`.
E4M3_MAX = 448.0

#: The smallest amax a scale is computed from (torchao's ``EPS``), so that an all-zero tensor gets a finite scale.
AMAX_FLOOR = 1e-12

_BIAS, _MANTISSA_BITS = 7, 3
_MIN_NORMAL_EXP = 1 - _BIAS                     # 2**-6, the smallest normal number


def encode(values) -> np.ndarray:
    """Each value's nearest e4m3 number as its byte (``uint8``), ties to even; beyond +-448 it saturates to +-448.

    NaN is not accepted (ValueError): a cast that saturates has no use for it.
    """
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError("values must not be NaN")
    # The idea: the byte's low 7 bits count the format's non-negative values in order, 8 to a power of two, so
    # |x| rounded to its spacing gives the code directly, and a mantissa that rounds up to 8 carries into the exponent.
    a = np.minimum(np.abs(x), E4M3_MAX)
    _, e = np.frexp(a)                          # a = f * 2**e, f in [0.5, 1)
    exp = np.where(a > 0, np.maximum(e - 1, _MIN_NORMAL_EXP), _MIN_NORMAL_EXP)  # below 2**-6: the subnormals'
    step = np.ldexp(1.0, exp - _MANTISSA_BITS)  # the spacing of e4m3 values around a
    steps = np.rint(a / step)                   # round half to even, exactly (a / step is exact in binary)
    code = (exp + _BIAS - 1) * 8 + steps        # the subnormals' exponent field is 0: the same sum gives steps
    return (code + 128 * np.signbit(x)).astype(np.uint8)


def decode(codes) -> np.ndarray:
    """The values of e4m3 bytes (``uint8``), as float64 (exactly); the NaN pattern (all ones) gives NaN."""
    c = np.asarray(codes)
    if c.dtype != np.uint8:
        raise ValueError(f"codes must be uint8 bytes, got dtype {c.dtype}")
    c = c.astype(np.int64)
    exp_field, mantissa = (c >> 3) & 15, c & 7
    normal = np.ldexp(1.0 + mantissa / 8.0, exp_field - _BIAS)
    subnormal = np.ldexp(mantissa / 8.0, _MIN_NORMAL_EXP)
    value = np.where(exp_field == 0, subnormal, normal)
    value = np.where((c & 127) == 127, np.nan, value)
    return np.where(c >= 128, -value, value)


def tensorwise_scale(amax: float) -> float:
    """The scale s = 448 / amax that maps a tensor's largest magnitude onto e4m3's largest (amax floored at
    :data:`AMAX_FLOOR`)."""
    amax = float(amax)
    if not amax >= 0:
        raise ValueError(f"amax must be >= 0, got {amax!r}")
    return E4M3_MAX / max(amax, AMAX_FLOOR)


def cast_tensorwise(values, scale: float) -> np.ndarray:
    """What a reader gets back from values sent in e4m3 with one ``scale``: decode(encode(values * s)) / s."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    return decode(encode(np.asarray(values, dtype=float) * scale)) / scale

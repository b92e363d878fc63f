"""bf16-io.test's data: float32 values with their bfloat16 rounding (to
nearest, ties to even, NaN kept NaN), as .npy of uint16 bit patterns
(numpy has no bfloat16), and a bf16 input with its float32 value and its
sum with itself.

usage: gen_bf16_io.py <out dir>"""
import os
import sys

import numpy as np


def to_bf16_bits(x):
    """A NaN keeps its sign and its payload's top bits, quieted (as the
    CPU's VCVTNEPS2BF16 does; numpy's and PyTorch's canonical NaN
    0x7FC00000 becomes 0x7FC0, as in PyTorch)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(np.isnan(x), (bits >> 16) | 0x40, rounded).astype(np.uint16)


def from_bf16_bits(h):
    return (h.astype(np.uint32) << 16).view(np.float32)


out = sys.argv[1]
# Ties both ways (1 + 2^-8 rounds down to even, 1 + 3 * 2^-8 up), a value
# just past a tie, infinities, NaNs (the canonical one, a negative one,
# one whose payload rounding would carry into the exponent), and numbers
# too small or too large for a 7-bit mantissa.
nans = np.array([0xFFC00000, 0x7FFFFFFF], np.uint32).view(np.float32)
x = np.array([[1 + 2 ** -8, 1 + 3 * 2 ** -8, 0.48033667, -np.inf, nans[0], 1.0],
              [np.inf, np.nan, 3.0e38, -1.0e-40, nans[1], -1.0]], np.float32)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "rounded.npy"), to_bf16_bits(x))
h = to_bf16_bits(np.array([[0.5, -2.75, 1.0e-3, 65504.0],
                           [3.25, -0.0078125, 100.0, -1.5]], np.float32))
np.save(os.path.join(out, "h.npy"), h)
np.save(os.path.join(out, "widened.npy"), from_bf16_bits(h))
np.save(os.path.join(out, "doubled.npy"), to_bf16_bits(2 * from_bf16_bits(h)))

"""The masks tp's training-mode Dropout draws, computed with numpy.

tp.dropout (lib/Conversion/TPToLinalg/Dropout.cpp) keeps an element when
the first word of Philox4x32-10 is at least p * 2^32, with
key = (seed low 32 bits, seed high 32 bits) and
counter = (index low 32 bits, index high 32 bits, site, run), where index
is the element's row-major index in the whole tensor, site the Dropout's
number among the model's Dropout nodes (graph order, from 0) and run the
number of times the program ran before (from 0). This module computes the
same masks, so that a reference (PyTorch given tp's masks) can be run
beside a compiled program.
"""
import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


def philox4x32(counter, key, rounds=10):
    """Philox4x32 (Random123) of `counter`, four arrays of 32-bit words,
    and `key`, two ints: the four output words as uint64 arrays."""
    c = [np.asarray(w, dtype=np.uint64) & _LOW for w in counter]
    k0, k1 = int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF
    for _ in range(rounds):
        p0 = _M0 * c[0]  # < 2^64: exact in uint64
        p1 = _M1 * c[2]
        c = [(p1 >> _SHIFT) ^ c[1] ^ np.uint64(k0), p1 & _LOW,
             (p0 >> _SHIFT) ^ c[3] ^ np.uint64(k1), p0 & _LOW]
        k0 = (k0 + _W0) & 0xFFFFFFFF
        k1 = (k1 + _W1) & 0xFFFFFFFF
    return c


def dropout_mask(shape, p, seed=0, step=0, site=0):
    """The keep mask (a bool array of `shape`, the whole tensor) of the
    Dropout numbered `site` with ratio `p` in run `step` of a program
    compiled with `seed`. The kept elements are scaled by 1 / (1 - p)."""
    shape = tuple(int(d) for d in shape)
    count = int(np.prod(shape, dtype=np.int64))
    index = np.arange(count, dtype=np.uint64)
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    word = philox4x32(
        [index & _LOW, index >> _SHIFT,
         np.full(count, int(site) & 0xFFFFFFFF, dtype=np.uint64),
         np.full(count, int(step) & 0xFFFFFFFF, dtype=np.uint64)],
        [seed & 0xFFFFFFFF, seed >> 32])[0]
    # ONNX stores the ratio as float32; round half away from zero, as
    # llround does.
    ratio = float(np.float32(p))
    threshold = int(np.floor(ratio * 2.0 ** 32 + 0.5))
    return (word >= np.uint64(threshold)).reshape(shape) if threshold < 2 ** 32 \
        else np.zeros(shape, dtype=bool)

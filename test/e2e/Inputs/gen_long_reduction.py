"""Inputs and float64 references for long-reduction.test: the mean of
524,288 squares (all dims of [4, 512, 256]), and over rows of 300,000 terms
(not a multiple of the block) a sum, an L2 norm, a softmax's denominator and
a layer norm's mean and variance. Each reference is computed in float64
from the float32 inputs and rounded once."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.uniform(0.0, 1.5, (4, 512, 256)).astype(np.float32)
y = rng.uniform(0.0, 1.0, (3, 300000)).astype(np.float32)
gamma = np.ones(300000, np.float32)
beta = np.zeros(300000, np.float32)
for name, value in (("x", x), ("y", y), ("gamma", gamma), ("beta", beta)):
    np.save(os.path.join(out, name + ".npy"), value)
x64, y64 = x.astype(np.float64), y.astype(np.float64)


def save(name, value):
    np.save(os.path.join(out, name + ".npy"), np.asarray(value).astype(np.float32))


save("mean_sq", np.mean(x64 * x64))
save("row_sums", y64.sum(axis=1))
save("l2", np.sqrt((y64 * y64).sum(axis=1)))
e = np.exp(y64 - y64.max(axis=1, keepdims=True))
save("softmax", e / e.sum(axis=1, keepdims=True))
mean = y64.mean(axis=1, keepdims=True)
var = ((y64 - mean) ** 2).mean(axis=1, keepdims=True)
save("layer_norm", (y64 - mean) / np.sqrt(var + 1e-5))

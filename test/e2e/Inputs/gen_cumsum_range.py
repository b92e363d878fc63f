#!/usr/bin/python3
"""Inputs and numpy references for cumsum-range.onnxtxt into argv[1]."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(5)
x = rng.standard_normal((2, 5)).astype(np.float32)
v = rng.standard_normal((2, 3, 4)).astype(np.float32)
save = lambda name, a: np.save(os.path.join(out, name + ".npy"), np.asarray(a, np.float32))
save("x", x)
save("v", v)
save("plain", np.cumsum(x, 1))
save("exclusive", np.cumsum(x, 1) - x)
rev = np.flip(np.cumsum(np.flip(x, 1), 1), 1)
save("reverse", rev - x)
save("along0", np.flip(np.cumsum(np.flip(v, 0), 0), 0))
save("positions", x + np.arange(0.5, 3, 0.5))
mean = v.mean(2, keepdims=True)
var = ((v - mean) ** 2).mean(2, keepdims=True)
scale = np.array([1, 2, 0.5]).reshape(3, 1)
bias = np.array([0, 0.1, -0.2]).reshape(3, 1)
save("inorm", (v - mean) / np.sqrt(var + 0.01) * scale + bias)

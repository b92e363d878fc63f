#!/usr/bin/python3
"""Inputs and numpy references for topk-scatter.onnxtxt into argv[1]:
TopK with ties and -inf (ONNX's order: equal values by lower index first),
largest along the last axis and smallest along the first; ScatterND
replacing rows (negative index), adding at repeated index pairs, and
replacing rows whose indices are a graph input."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(9)
x = rng.integers(-3, 4, (4, 6)).astype(np.float32)  # many ties
x[1, 2] = -np.inf
x[2, :] = -np.inf  # a row of -inf: ties all along
u = rng.standard_normal((2, 6)).astype(np.float32)
v = rng.standard_normal(3).astype(np.float32)
rows = np.array([[1], [-1]], dtype=np.int64)


def save(name, a, dtype=np.float32):
    np.save(os.path.join(out, name + ".npy"), np.asarray(a, dtype))


save("x", x)
save("u", u)
save("v", v)
save("rows", rows, np.int64)
order = np.argsort(-x, axis=1, kind="stable")[:, :3]
save("top", np.take_along_axis(x, order, 1))
save("top_at", order, np.int64)
order0 = np.argsort(x, axis=0, kind="stable")[:2]
save("low", np.take_along_axis(x, order0, 0))
save("low_at", order0, np.int64)
put = x.copy()
put[3], put[0] = u[0], u[1]
save("put", put)
added = x.copy()
for (i, j), val in zip([(0, 1), (2, 5), (0, 1)], v):
    added[i, j] += val
save("added", added)
dyn = x.copy()
dyn[1], dyn[3] = u[0], u[1]
save("put_at_run_time", dyn)

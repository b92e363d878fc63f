#!/usr/bin/python3
"""Checks two SGD-with-momentum steps (the momentum buffer carried by
tp-run from step to step) against the formula, given
  W0 (original model), W1 (saved after step 1), W2 (saved after step 2),
  g1 (PyTorch's gradients at W0), g2 (gradients at W1, from --dump-grads):
  buf1 = g1 + wd W0;  buf2 = m buf1 + g2 + wd W1;  W2 = W1 - lr buf2

usage: check_momentum.py <onnx_pb2 dir> <W0.onnx> <W1.onnx> <W2.onnx> <g1 dir> <g2 dir> <lr> <momentum> <wd>
"""
import os
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_sgd_step import weights  # noqa: E402

w0, w1, w2 = (weights(p) for p in sys.argv[2:5])
g1dir, g2dir = sys.argv[5], sys.argv[6]
lr, m, wd = (float(v) for v in sys.argv[7:10])
ok = True
for name in w0:
    g1 = np.load(os.path.join(g1dir, "grads", f"{name}.npy")).astype(np.float64)
    g2 = np.load(os.path.join(g2dir, f"{name}.npy")).astype(np.float64)
    buf2 = m * (g1 + wd * w0[name]) + g2 + wd * w1[name]
    want = w1[name] - lr * buf2
    err = np.abs(w2[name] - want).max() / max(np.abs(want).max(), 1e-30)
    good = err <= 1e-5
    ok &= good
    print(f"{name}: relative {err:.3g} {'OK' if good else 'MISMATCH'}")
sys.exit(0 if ok else 1)

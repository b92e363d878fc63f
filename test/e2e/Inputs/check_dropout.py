#!/usr/bin/python3
"""Checks a training-mode Dropout's output on an input of ones.

usage: check_dropout.py <y.npy> <mask.npy> <p> <seed> <run> <site>
Prints the keep rate against the binomial bounds (5 standard deviations
around 1 - p), whether every kept element is exactly float32(1 / (1 - p))
and every other one 0, whether the mask output is where y is kept, and
whether the mask equals tp.dropout_mask's (python/tp/dropout.py) for that
seed, run and site. Exits 1 on any failure.
"""
import importlib.util
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "tp_dropout", os.path.join(HERE, "..", "..", "..", "python", "tp", "dropout.py"))
tp_dropout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp_dropout)

y, mask = np.load(sys.argv[1]), np.load(sys.argv[2])
p, seed, run, site = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
ok = True
n = y.size
keep = 1 - p
rate = np.count_nonzero(y) / n
spread = 5 * math.sqrt(keep * p / n)
good = abs(rate - keep) <= spread
ok &= good
print("keep rate %.4f within [%.4f, %.4f]: %s" % (rate, keep - spread, keep + spread,
                                                  "OK" if good else "FAIL"))
scale = np.float32(1.0) / np.float32(1.0 - p)
good = bool(np.all((y == scale) | (y == 0)))
ok &= good
print("kept elements scaled by 1/(1-p) = %r: %s" % (float(scale), "OK" if good else "FAIL"))
good = bool(np.array_equal(mask, y != 0))
ok &= good
print("mask output where y is kept: %s" % ("OK" if good else "FAIL"))
reference = tp_dropout.dropout_mask(y.shape, p, seed, run, site)
good = bool(np.array_equal(mask, reference))
ok &= good
print("mask equals tp.dropout_mask(seed=%d, step=%d, site=%d): %s"
      % (seed, run, site, "OK" if good else "FAIL"))
sys.exit(0 if ok else 1)

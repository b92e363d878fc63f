#!/usr/bin/python3
"""A model that trains through Mod (fmod = 1) and GatherElements, with
float64 numpy gradients written from the formulas (not by tp).

y = GatherElements(axis 1)(fmod(w, v), i), loss = mean(y^2) (tp-compile
--loss mse); w and v are [4, 6] weights, i [4, 3] indices in [-6, 6).
Writes into argv[1]: model.onnxtxt, i.npy, grad_w.npy, grad_v.npy.
"""
import os
import sys

import numpy as np

out = sys.argv[1]
r = np.random.default_rng(5)
w = (r.standard_normal((4, 6)) * 3).astype(np.float32)
v = (r.uniform(0.5, 1.5, (4, 6)) * np.where(r.random((4, 6)) < 0.5, -1, 1)).astype(np.float32)
i = r.integers(-6, 6, (4, 3))


def values(a):
    return ", ".join(repr(float(x)) for x in a.ravel())


with open(os.path.join(out, "model.onnxtxt"), "w") as f:
    f.write(f"""<
  ir_version: 8,
  opset_import: ["" : 13]
>
pick (int64[4,3] i) => (float[4,3] y)
  <float[4,6] w = {{{values(w)}}}, float[4,6] v = {{{values(v)}}}>
{{
  r = Mod <fmod = 1> (w, v)
  y = GatherElements <axis = 1> (r, i)
}}
""")

rem = np.fmod(w.astype(np.float64), v)
y = np.take_along_axis(rem, i % 6, 1)
dy = 2 * y / y.size
drem = np.zeros_like(rem)
np.add.at(drem, (np.arange(4)[:, None], i % 6), dy)  # scatter-add along axis 1
np.save(os.path.join(out, "i.npy"), i)
np.save(os.path.join(out, "grad_w.npy"), drem.astype(np.float32))
# fmod(w, v) = w - trunc(w / v) v: d/dv = -trunc(w / v) = (fmod - w) / v
np.save(os.path.join(out, "grad_v.npy"), (drem * (rem - w) / v).astype(np.float32))

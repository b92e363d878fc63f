#!/usr/bin/python3
"""Finite-difference references for every VJP rule of tp-autodiff.

Writes into argv[1], per case: <case>.onnxtxt (a one- or two-op ONNX model
whose weight `w` (and `b`) is an initializer), <case>.x.npy, and
<case>.grad_<weight>.npy: the gradient of mean(y^2) with respect to each
weight by central differences in float64. Also `cases`: one line per case,
"<case> <weight> [<weight>]".
"""
import importlib.util
import math
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)
erf = np.vectorize(math.erf)
cases = []


def tensor_text(name, a):
    dims = ",".join(str(d) for d in a.shape)
    values = ", ".join(repr(float(v)) for v in a.ravel())
    return f"float[{dims}] {name} = {{{values}}}"


def case(name, nodes, x, weights, forward, opset=13, ints=None, buffers=None):
    """nodes: ONNX text of the graph body reading x and the weights and
    writing y; forward(x, **weights) -> y in numpy. `buffers`: initializers
    that get no gradient (BatchNormalization's running statistics)."""
    y = forward(x, **weights)
    inits = ", ".join(tensor_text(k, v) for k, v in {**weights, **(buffers or {})}.items())
    xdims = ",".join(str(d) for d in x.shape)
    ydims = ",".join(str(d) for d in np.shape(y))
    text = f"""<
  ir_version: 8,
  opset_import: ["" : {opset}]
>
{name} (float[{xdims}] x) => (float[{ydims}] y)
<{inits}>
{{
{nodes}
}}
"""
    with open(os.path.join(out, name + ".onnxtxt"), "w") as f:
        f.write(text)
    np.save(os.path.join(out, name + ".x.npy"), x.astype(np.float32))

    def loss(ws):
        return float(np.mean(np.square(forward(x.astype(np.float64), **ws))))

    base = {k: v.astype(np.float64) for k, v in weights.items()}
    for k in weights:
        grad = np.zeros_like(base[k])
        eps = 1e-6
        for idx in np.ndindex(grad.shape):
            plus = {n: v.copy() for n, v in base.items()}
            minus = {n: v.copy() for n, v in base.items()}
            plus[k][idx] += eps
            minus[k][idx] -= eps
            grad[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        np.save(os.path.join(out, f"{name}.grad_{k}.npy"), grad.astype(np.float32))
    cases.append(name + " " + " ".join(weights))


def f32(*shape, low=None):
    a = rng.standard_normal(shape).astype(np.float32)
    if low is not None:  # keep away from zero / the domain's edge
        a = np.abs(a) + low
    return a


x34 = f32(3, 4)
case("add", "  y = Add (x, w)", x34, {"w": f32(4)}, lambda x, w: x + w)
case("sub", "  y = Sub (x, w)", x34, {"w": f32(3, 1)}, lambda x, w: x - w)
case("mul", "  y = Mul (x, w)", x34, {"w": f32(4)}, lambda x, w: x * w)
case("div", "  y = Div (x, w)", x34, {"w": f32(4, low=0.5)}, lambda x, w: x / w)
case("div_numerator", "  y = Div (w, x)", f32(3, 4, low=0.5), {"w": f32(4)},
     lambda x, w: w / x)
case("pow", "  three = Constant <value = float {3.0}> ()\n  p = Pow (w, three)\n  y = Mul (p, x)",
     x34, {"w": f32(3, 4, low=0.3)}, lambda x, w: w ** 3 * x)
for op, fn, low in [("Neg", lambda w: -w, None),
                    ("Relu", lambda w: np.maximum(w, 0), None),
                    ("Sqrt", np.sqrt, 0.3),
                    ("Erf", erf, None),
                    ("Tanh", np.tanh, None),
                    ("Sin", np.sin, None),
                    ("Cos", np.cos, None),
                    ("Sigmoid", lambda w: 1 / (1 + np.exp(-w)), None),
                    ("Exp", np.exp, None),
                    ("Log", np.log, 0.3),
                    ("Reciprocal", lambda w: 1 / w, 0.5)]:
    w = f32(3, 4, low=low)
    if op == "Relu":  # finite differences need distance from the kink
        w = np.where(np.abs(w) < 0.05, 0.3, w).astype(np.float32)
    case(op.lower(), f"  u = {op} (w)\n  y = Mul (u, x)", x34, {"w": w},
         lambda x, w, fn=fn: fn(w) * x)
case("matmul_broadcast_batch", "  y = MatMul (x, w)", f32(2, 3, 4), {"w": f32(4, 5)},
     lambda x, w: x @ w)
case("matmul_left", "  y = MatMul (w, x)", f32(4, 2), {"w": f32(3, 4)},
     lambda x, w: w @ x)
case("matmul_batched", "  y = MatMul (x, w)", f32(2, 3, 4), {"w": f32(2, 4, 5)},
     lambda x, w: x @ w)
case("transpose", "  t = Transpose <perm = [1, 0]> (w)\n  y = MatMul (x, t)", x34,
     {"w": f32(5, 4)}, lambda x, w: x @ w.T)
case("reshape", "  s = Constant <value = int64[2] {3, 4}> ()\n  r = Reshape (w, s)\n  y = Mul (r, x)",
     x34, {"w": f32(12)}, lambda x, w: w.reshape(3, 4) * x)
case("expand", "  s = Constant <value = int64[2] {3, 4}> ()\n  e = Expand (w, s)\n  y = Mul (e, x)",
     x34, {"w": f32(1, 4)}, lambda x, w: np.broadcast_to(w, (3, 4)) * x)
case("reduce_sum", "  m = Mul (w, x)\n  a = Constant <value = int64[1] {1}> ()\n  y = ReduceSum <keepdims = 0> (m, a)",
     x34, {"w": f32(3, 4)}, lambda x, w: (w * x).sum(1))
case("reduce_mean", "  m = Mul (w, x)\n  y = ReduceMean <axes = [0]> (m)", x34, {"w": f32(3, 4)},
     lambda x, w: (w * x).mean(0, keepdims=True))


def softmax(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


case("softmax", "  m = Mul (w, x)\n  y = Softmax (m)", x34, {"w": f32(3, 4)},
     lambda x, w: softmax(w * x))


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


x2 = f32(2, 3, 4)
case("layer_norm", "  y = LayerNormalization (x, w, b)", x2, {"w": f32(4), "b": f32(4)},
     layer_norm, opset=17)
# The input's gradient flows too: a weight before the norm.
case("layer_norm_input", "  h = Mul (x, w)\n  s = Constant <value = float[4] {1.0, 0.5, -1.0, 2.0}> ()\n"
     "  z = Constant <value = float[4] {0.1, 0.2, 0.3, 0.4}> ()\n  y = LayerNormalization (h, s, z)",
     x2, {"w": f32(4)},
     lambda x, w: layer_norm(x * w, np.array([1.0, 0.5, -1.0, 2.0]), np.array([0.1, 0.2, 0.3, 0.4])),
     opset=17)
case("cast", "  d = Cast <to = 11> (w)\n  f = Cast <to = 1> (d)\n  y = Mul (f, x)", x34,
     {"w": f32(3, 4)}, lambda x, w: w * x)
# A value with two users: gradients accumulate.
case("fan_out", "  a = Mul (w, x)\n  b2 = Mul (a, w)\n  y = Add (a, b2)", x34, {"w": f32(4)},
     lambda x, w: w * x + w * x * w)



def log_softmax(v):
    s = v - v.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


case("log_softmax", "  m = Mul (w, x)\n  y = LogSoftmax (m)", x34, {"w": f32(3, 4)},
     lambda x, w: log_softmax(w * x))
case("where", "  z = Constant <value = float {0.0}> ()\n  c = Greater (x, z)\n"
     "  m = Mul (w, x)\n  y = Where (c, m, w)", x34, {"w": f32(4)},
     lambda x, w: np.where(x > 0, w * x, np.broadcast_to(w, x.shape)))
# Max / Min pick one operand per element; keep the two apart (no ties).
wmax = f32(3, 4)
xmax = (wmax + np.where(rng.random((3, 4)) < 0.5, 0.5, -0.5)).astype(np.float32)
case("max", "  y = Max (w, x)", xmax, {"w": wmax}, lambda x, w: np.maximum(w, x))
case("min", "  y = Min (x, w)", xmax, {"w": wmax}, lambda x, w: np.minimum(x, w))
case("concat", "  c = Concat <axis = 1> (w, x)\n  y = Mul (c, c)", x34, {"w": f32(3, 2)},
     lambda x, w: np.concatenate([w, x], 1) ** 2)
case("slice", "  s = Constant <value = int64[2] {1, 1}> ()\n  e = Constant <value = int64[2] {3, 4}> ()\n"
     "  a = Constant <value = int64[2] {0, 1}> ()\n  t = Slice (w, s, e, a)\n  y = Mul (t, x)",
     f32(2, 3), {"w": f32(4, 5)}, lambda x, w: w[1:3, 1:4] * x)
# An embedding lookup: ids repeat, so rows accumulate.
case("gather", "  ids = Constant <value = int64[5] {0, 2, 1, 2, 4}> ()\n  e = Gather (w, ids)\n"
     "  y = Mul (e, x)", f32(5, 3), {"w": f32(6, 3)},
     lambda x, w: w[[0, 2, 1, 2, 4]] * x)
# Gather on another axis: ViT's class-token select x[:, 0] (a scalar index),
# and a matrix of indices that repeat and count from the end.
case("gather_axis1_scalar", "  i = Constant <value = int64 {0}> ()\n  e = Gather <axis = 1> (w, i)\n"
     "  y = Mul (e, x)", f32(2, 3), {"w": f32(2, 5, 3)}, lambda x, w: w[:, 0] * x)
case("gather_axis1", "  ids = Constant <value = int64[2,2] {0, 4, -1, 0}> ()\n"
     "  e = Gather <axis = 1> (w, ids)\n  y = Mul (e, x)", f32(2, 2, 2, 3), {"w": f32(2, 5, 3)},
     lambda x, w: w[:, np.array([[0, 4], [4, 0]])] * x)
# GatherElements: indices repeat (the gradient accumulates) and count from
# the end when negative; along the last axis and along the first.
ids_last = np.array([[0, -1], [2, 2], [-4, 1]])
case("gather_elements", "  ids = Constant <value = int64[3,2] {0, -1, 2, 2, -4, 1}> ()\n"
     "  e = GatherElements <axis = 1> (w, ids)\n  y = Mul (e, x)", f32(3, 2), {"w": f32(3, 4)},
     lambda x, w: np.take_along_axis(w, ids_last % 4, 1) * x)
ids_first = np.array([[3, 0, -1], [1, 1, 2], [0, -4, 3], [2, 3, 3], [-2, 0, 1]])
case("gather_elements_axis0", "  ids = Constant <value = int64[5,3] {3, 0, -1, 1, 1, 2, 0, -4, 3, "
     "2, 3, 3, -2, 0, 1}> ()\n  e = GatherElements <axis = 0> (w, ids)\n  y = Mul (e, x)",
     f32(5, 3), {"w": f32(4, 3)}, lambda x, w: np.take_along_axis(w, ids_first % 4, 0) * x)
# Mod (fmod = 1), as dividend and as divisor: quotients kept between
# integers (n + 0.3 .. n + 0.7), away from fmod's jumps.
xmod = (f32(3, 4) + np.sign(f32(3, 4)) * 0.5).astype(np.float32)
quotient = rng.integers(-2, 3, (3, 4)) + rng.uniform(0.3, 0.7, (3, 4))
case("rem", "  y = Mod <fmod = 1> (w, x)", xmod, {"w": (xmod * quotient).astype(np.float32)},
     lambda x, w: np.fmod(w, x))
case("rem_divisor", "  y = Mod <fmod = 1> (x, w)", xmod, {"w": (xmod / quotient).astype(np.float32)},
     lambda x, w: np.fmod(x, w))


def conv_ref(x, w, strides, pads, dilations, group=1):
    """ONNX Conv without bias, any number of spatial dims (pads: begins, ends)."""
    r = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[r + i]) for i in range(r)])
    k = w.shape[2:]
    o = [(xp.shape[2 + i] - dilations[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(r)]
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    y = np.zeros((n, m, *o), dtype=x.dtype)
    for ks in np.ndindex(*k):
        window = tuple(slice(ks[i] * dilations[i], ks[i] * dilations[i] + strides[i] * (o[i] - 1) + 1,
                             strides[i]) for i in range(r))
        xs = xp[(slice(None), slice(None)) + window].reshape(n, group, cg, *o)
        ws = w[(slice(None), slice(None)) + ks].reshape(group, m // group, cg)
        y += np.einsum("ngc...,gmc->ngm...", xs, ws).reshape(n, m, *o)
    return y


def conv_case(name, x, weights, strides, pads, dilations, group=1, scaled=False):
    """y = Conv(x, w), or Conv(x * a, w) when `scaled` (`a` shaped like one
    sample: its gradient is the input's gradient, position by position,
    summed over the batch), then y * y."""
    attrs = (f"strides = [{', '.join(map(str, strides))}], pads = [{', '.join(map(str, pads))}], "
             f"dilations = [{', '.join(map(str, dilations))}], group = {group}")
    first = "  h = Mul (x, a)\n  c = Conv <" + attrs + "> (h, w)" if scaled else \
        "  c = Conv <" + attrs + "> (x, w)"
    case(name, first + "\n  y = Mul (c, c)", x, weights,
         lambda x, w, a=None: conv_ref(x * a if scaled else x, w, strides, pads, dilations, group) ** 2)


# Conv: the filter's gradient, and (through `a`) the input's, with strides,
# asymmetric pads, dilation, groups, depthwise, a window that does not reach
# the input's end, a pad wider than the window, ViT's patchify.
conv_case("conv", f32(2, 3, 5, 5), {"w": f32(4, 3, 3, 3)}, [1, 1], [1, 1, 1, 1], [1, 1])
conv_case("conv_strided", f32(1, 2, 6, 7), {"w": f32(3, 2, 3, 2), "a": f32(1, 2, 6, 7)},
          [2, 2], [1, 0, 0, 1], [1, 1], scaled=True)
conv_case("conv_dilated", f32(1, 2, 7, 6), {"w": f32(2, 2, 3, 2), "a": f32(1, 2, 7, 6)},
          [1, 2], [2, 1, 2, 0], [2, 2], scaled=True)
conv_case("conv_grouped", f32(2, 4, 5, 5), {"w": f32(6, 2, 3, 3), "a": f32(1, 4, 5, 5)},
          [2, 2], [1, 1, 1, 1], [1, 1], group=2, scaled=True)
conv_case("conv_depthwise", f32(2, 3, 5, 4), {"w": f32(3, 1, 3, 3), "a": f32(1, 3, 5, 4)},
          [1, 1], [1, 1, 1, 1], [1, 1], group=3, scaled=True)
conv_case("conv_1d_wide_pad", f32(2, 2, 6), {"w": f32(3, 2, 2), "a": f32(1, 2, 6)},
          [2], [3, 2], [1], scaled=True)
conv_case("conv_patchify", f32(2, 3, 8, 8), {"w": f32(5, 3, 4, 4), "a": f32(1, 3, 8, 8)},
          [4, 4], [0, 0, 0, 0], [1, 1], scaled=True)

# TopK (composed: each element's place counted by comparisons, picked by a
# where + reduce_sum): the values' gradient goes to the chosen elements.
# Distinct values, so that the choice does not change under the step.
wtop = (rng.permutation(12).reshape(3, 4) * 0.5 + 0.1).astype(np.float32)
case("topk", "  k = Constant <value = int64[1] {2}> ()\n  t, i = TopK <axis = 1> (w, k)\n"
     "  y = Mul (t, x)", f32(3, 2), {"w": wtop},
     lambda x, w: -np.sort(-w, 1)[:, :2] * x)
case("topk_smallest_axis0", "  k = Constant <value = int64[1] {2}> ()\n"
     "  t, i = TopK <axis = 0, largest = 0> (w, k)\n  y = Mul (t, x)", f32(2, 4), {"w": wtop},
     lambda x, w: np.sort(w, 0)[:2] * x)


# ScatterND (composed: a one-hot product lands the updates, a select keeps
# the data elsewhere): gradients to the data (not where overwritten) and to
# the updates; with reduction add, to both everywhere.
def scatter_nd(data, idx, upd, add=False):
    out = data.copy()
    for i, u in zip(idx, upd):
        if add:
            out[tuple(i)] += u
        else:
            out[tuple(i)] = u
    return out


case("scatter_nd", "  ids = Constant <value = int64[2,1] {2, 0}> ()\n  s = ScatterND (w, ids, u)\n"
     "  y = Mul (s, x)", f32(4, 3), {"w": f32(4, 3), "u": f32(2, 3)},
     lambda x, w, u: scatter_nd(w, [[2], [0]], u) * x)
case("scatter_nd_add", "  ids = Constant <value = int64[3,2] {1, 2, 3, 0, 1, 2}> ()\n"
     "  s = ScatterND <reduction = \"add\"> (w, ids, u)\n  y = Mul (s, x)", f32(4, 3),
     {"w": f32(4, 3), "u": f32(3)},
     lambda x, w, u: scatter_nd(w, [[1, 2], [3, 0], [1, 2]], u, add=True) * x, opset=16)


def pool_ref(x, kind, kernel, strides, pads, dilations=None, count_include_pad=0, ceil=False):
    """ONNX MaxPool / AveragePool (pads: begins, ends)."""
    r = x.ndim - 2
    dilations = dilations or [1] * r
    pads = list(pads)
    span = [dilations[i] * (kernel[i] - 1) + 1 for i in range(r)]
    if ceil:  # windows that start inside the padded input but overhang its end
        for i in range(r):
            total = x.shape[2 + i] + pads[i] + pads[r + i] - span[i]
            pads[r + i] += (-total) % strides[i]
    fill = -np.inf if kind == "max" else 0.0
    widths = [(0, 0), (0, 0)] + [(pads[i], pads[r + i]) for i in range(r)]
    xp = np.pad(x, widths, constant_values=fill)
    inside = np.pad(np.ones_like(x), widths)
    o = [(xp.shape[2 + i] - span[i]) // strides[i] + 1 for i in range(r)]
    vals, cnts = [], []
    for ks in np.ndindex(*kernel):
        window = tuple(slice(ks[i] * dilations[i], ks[i] * dilations[i] + strides[i] * (o[i] - 1) + 1,
                             strides[i]) for i in range(r))
        vals.append(xp[(slice(None), slice(None)) + window])
        cnts.append(inside[(slice(None), slice(None)) + window])
    if kind == "max":
        return np.max(vals, 0)
    if count_include_pad or not any(pads):
        return np.sum(vals, 0) / np.prod(kernel)
    return np.sum(vals, 0) / np.sum(cnts, 0)


def pool_case(name, op, attrs, x, forward):
    """y = op(x * a) with `a` shaped like one sample, then y * y."""
    case(name, f"  h = Mul (x, a)\n  p = {op} <{attrs}> (h)\n  y = Mul (p, p)", x,
         {"a": f32(1, *x.shape[1:])}, lambda x, a: forward(x * a) ** 2)


# Pooling: MaxPool's gradient goes to each window's maximum (ResNet's 3x3
# stride 2 pad 1: overlapping windows; 2x2 stride 2; 1-D dilated);
# AveragePool's spreads over the window, with and without the padding
# counted, and with ceil_mode's windows past the end; GlobalAveragePool.
pool_case("maxpool_resnet", "MaxPool", "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]",
          f32(2, 2, 7, 7), lambda h: pool_ref(h, "max", [3, 3], [2, 2], [1, 1, 1, 1]))
pool_case("maxpool_2x2", "MaxPool", "kernel_shape = [2, 2], strides = [2, 2]",
          f32(2, 3, 4, 6), lambda h: pool_ref(h, "max", [2, 2], [2, 2], [0, 0, 0, 0]))
pool_case("maxpool_1d_dilated", "MaxPool", "kernel_shape = [2], strides = [1], dilations = [2], pads = [1, 0]",
          f32(2, 2, 7), lambda h: pool_ref(h, "max", [2], [1], [1, 0], [2]))
# Strides, dilations and pads that differ per dim: offsets land on both
# phases of the stride-2 dim (one of them twice) and on one phase of the
# stride-3 dim, with rows no window reaches.
pool_case("maxpool_phases", "MaxPool",
          "kernel_shape = [3, 2], strides = [2, 3], dilations = [1, 2], pads = [1, 0, 2, 1]",
          f32(2, 2, 9, 8), lambda h: pool_ref(h, "max", [3, 2], [2, 3], [1, 0, 2, 1], [1, 2]))
pool_case("avgpool_pad_excluded", "AveragePool", "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]",
          f32(2, 2, 6, 5), lambda h: pool_ref(h, "avg", [3, 3], [2, 2], [1, 1, 1, 1]))
pool_case("avgpool_pad_included", "AveragePool",
          "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1",
          f32(2, 2, 6, 5), lambda h: pool_ref(h, "avg", [3, 3], [2, 2], [1, 1, 1, 1], count_include_pad=1))
pool_case("avgpool_ceil", "AveragePool", "kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1",
          f32(1, 2, 5, 5), lambda h: pool_ref(h, "avg", [2, 2], [2, 2], [0, 0, 0, 0], ceil=True))
case("global_avgpool", "  h = Mul (x, a)\n  p = GlobalAveragePool (h)\n  y = Mul (p, p)", f32(2, 3, 4, 4),
     {"a": f32(1, 3, 4, 4)}, lambda x, a: np.mean(x * a, (2, 3), keepdims=True) ** 2)


def conv_transpose_ref(x, w, strides, pads, output_padding):
    """ONNX ConvTranspose, group 1, no dilation (pads: begins, ends)."""
    r = x.ndim - 2
    n, c = x.shape[:2]
    m = w.shape[1]
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * strides[i] + k[i] + output_padding[i] for i in range(r)]
    y = np.zeros((n, m, *full), dtype=x.dtype)
    for idx in np.ndindex(*x.shape[2:]):
        for ks in np.ndindex(*k):
            pos = tuple(idx[i] * strides[i] + ks[i] for i in range(r))
            y[(slice(None), slice(None)) + pos] += np.einsum(
                "nc,cm->nm", x[(slice(None), slice(None)) + idx], w[(slice(None), slice(None)) + ks])
    crop = tuple(slice(pads[i], full[i] - pads[r + i]) for i in range(r))
    return y[(slice(None), slice(None)) + crop]


# ConvTranspose (imported as zero insertion + conv): its filter's and its
# input's gradients, through the conv rule.
case("conv_transpose", "  h = Mul (x, a)\n  c = ConvTranspose <strides = [2, 2], pads = [1, 0, 1, 1], "
     "output_padding = [1, 1]> (h, w)\n  y = Mul (c, c)", f32(2, 3, 3, 4),
     {"w": f32(3, 2, 3, 3), "a": f32(1, 3, 3, 4)},
     lambda x, w, a: conv_transpose_ref(x * a, w, [2, 2], [1, 0, 1, 1], [1, 1]) ** 2)


def batchnorm_train(h, w, b, eps=1e-5):
    """Training-mode BatchNormalization: the batch's statistics per channel."""
    axes = (0,) + tuple(range(2, h.ndim))
    mean = h.mean(axes, keepdims=True)
    var = ((h - mean) ** 2).mean(axes, keepdims=True)
    shape = (1, -1) + (1,) * (h.ndim - 2)
    return (h - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


# BatchNormalization in training mode (opset 15's training_mode = 1): the
# gradients of its scale and bias, and through `a` of its input, which the
# batch statistics depend on. The running statistics are buffers.
case("batchnorm_train", "  h = Mul (x, a)\n  n, rm, rv = BatchNormalization <training_mode = 1> "
     "(h, w, b, mean, var)\n  y = Mul (n, n)", f32(4, 3, 2, 2),
     {"w": f32(3), "b": f32(3), "a": f32(1, 3, 2, 2)},
     lambda x, w, b, a: batchnorm_train(x * a, w, b) ** 2,
     opset=15, buffers={"mean": f32(3), "var": f32(3, low=0.5)})


# MobileNetV3's activations, imported as compositions of max / min / mul:
# HardSwish, HardSigmoid, Clip (ReLU6). Inputs kept away from the kinks.
def away_from(kinks, *shape):
    a = f32(*shape) * 3
    for k in kinks:
        a = np.where(np.abs(a - k) < 0.2, a + 0.5, a)
    return a.astype(np.float32)


case("hardswish", "  h = Mul (x, w)\n  y = HardSwish (h)", away_from([-3, 3], 3, 4),
     {"w": np.ones((4,), np.float32) + 0.1 * f32(4)},
     lambda x, w: (x * w) * np.clip(x * w + 3, 0, 6) / 6, opset=14)
case("hardsigmoid", "  h = Mul (x, w)\n  y = HardSigmoid <alpha = 0.16666667, beta = 0.5> (h)",
     away_from([-3, 3], 3, 4), {"w": np.ones((4,), np.float32) + 0.1 * f32(4)},
     lambda x, w: np.clip((x * w) / 6 + 0.5, 0, 1))
case("relu6", "  h = Mul (x, w)\n  lo = Constant <value = float {0}> ()\n  hi = Constant <value = float {6}> ()\n"
     "  y = Clip (h, lo, hi)", away_from([0, 6], 3, 4) + 2, {"w": np.ones((4,), np.float32) + 0.1 * f32(4)},
     lambda x, w: np.clip(x * w, 0, 6))

# Training-mode Dropout (seed 0, the first run, site 0): its mask is
# tp.dropout_mask's (python/tp/dropout.py); the backward pass draws it again.
spec = importlib.util.spec_from_file_location("tp_dropout", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python",
    "tp", "dropout.py"))
tp_dropout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp_dropout)
x68 = f32(6, 8)
keep68 = tp_dropout.dropout_mask((6, 8), 0.25)
case("dropout", "  h = Mul (x, w)\n  r = Constant <value = float {0.25}> ()\n"
     "  t = Constant <value = bool {1}> ()\n  y = Dropout (h, r, t)", x68,
     {"w": f32(8)}, lambda x, w: np.where(keep68, x * w / 0.75, 0.0))

with open(os.path.join(out, "cases"), "w") as f:
    f.write("\n".join(cases) + "\n")

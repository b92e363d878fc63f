#!/usr/bin/python3
"""Writes numerics.mlir: each tp op on small constant inputs, lowered and run
by mlir-runner, compared with numpy's result for the same inputs.

Run from this folder: /usr/bin/python3 Inputs/gen_numerics.py > numerics.mlir
"""
import math

import numpy as np

rng = np.random.default_rng(7)
cases = []


def mlir_type(a):
    elem = {np.float32: "f32", np.int64: "i64", np.bool_: "i1", np.int32: "i32"}[a.dtype.type]
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + elem + ">"


def literal(a):
    if a.dtype == np.bool_:
        flat = ["true" if v else "false" for v in a.ravel()]
    elif a.dtype == np.float32:
        flat = [repr(float(v)) for v in a.ravel()]
    else:
        flat = [str(int(v)) for v in a.ravel()]
    if a.ndim == 0:
        return f"dense<{flat[0]}>"
    return "dense<[" + ", ".join(flat) + "]>" if a.ndim == 1 else (
        "dense<" + np.array2string(np.array(flat, dtype=object).reshape(a.shape), separator=", ",
                                   formatter={"all": str}, threshold=10**9).replace("\n", "") + ">")


def case(name, body, inputs, expected):
    """body: tp ops reading %@in0.. and defining %@out; %@ becomes the case prefix."""
    cases.append((name, body, inputs, expected))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


x = f32(2, 3)
e = np.exp(x - x.max(1, keepdims=True))
case("softmax", "%@out = tp.softmax %@in0 {axis = 1 : i64} : tensor<2x3xf32>", [x],
     e / e.sum(1, keepdims=True))
case("log_softmax", "%@out = tp.log_softmax %@in0 {axis = 0 : i64} : tensor<2x3xf32>", [x],
     (x - x.max(0)) - np.log(np.exp(x - x.max(0)).sum(0)))

ln_x, g, b = f32(2, 4), f32(4), f32(4)
mu = ln_x.mean(1, keepdims=True)
var = ((ln_x - mu) ** 2).mean(1, keepdims=True)
case("layer_norm",
     "%@out = tp.layer_norm %@in0, %@in1, %@in2 {axis = 1 : i64, epsilon = 1.0e-05 : f32} "
     ": tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4xf32>",
     [ln_x, g, b], (ln_x - mu) / np.sqrt(var + 1e-5) * g + b)

r = f32(2, 3, 4)
case("reduce_mean", "%@out = tp.reduce_mean %@in0 {axes = array<i64: 0, 2>, keepdims = true} "
     ": tensor<2x3x4xf32> -> tensor<1x3x1xf32>", [r], r.mean((0, 2), keepdims=True))
case("reduce_max", "%@out = tp.reduce_max %@in0 {axes = array<i64: 1>, keepdims = false} "
     ": tensor<2x3x4xf32> -> tensor<2x4xf32>", [r], r.max(1))

table = f32(5, 3)
ids = np.array([[0, 4], [-1, 2]], dtype=np.int64)
case("gather", "%@out = tp.gather %@in0, %@in1 {axis = 0 : i64} "
     ": tensor<5x3xf32>, tensor<2x2xi64> -> tensor<2x2x3xf32>", [table, ids], table[ids])

a, bm = f32(3, 2, 4), f32(2, 1, 4, 5)
case("matmul_broadcast", "%@out = tp.matmul %@in0, %@in1 "
     ": tensor<3x2x4xf32>, tensor<2x1x4x5xf32> -> tensor<2x3x2x5xf32>", [a, bm], np.matmul(a, bm))
m1, m2 = f32(3, 4), f32(4, 2)
case("matmul_2d", "%@out = tp.matmul %@in0, %@in1 : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>",
     [m1, m2], m1 @ m2)

# The rows [2, 5) of a 5-row table on one device: ids outside give zeros.
full = f32(5, 3)
mids = np.array([0, 2, 4, 3, 5], dtype=np.int64)
offset = np.array(2, dtype=np.int64)
want = np.where(((mids >= 2) & (mids < 5))[:, None], full[np.clip(mids, 2, 4)], 0)
case("masked_gather", "%@out = tp.masked_gather %@in0, %@in1, %@in2 {axis = 0 : i64} "
     ": tensor<3x3xf32>, tensor<5xi64>, tensor<i64> -> tensor<5x3xf32>",
     [full[2:5], mids, offset], want)

c = np.array([[True], [False]])
wx, wy = f32(2, 3), f32(3)
case("where", "%@out = tp.where %@in0, %@in1, %@in2 "
     ": tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>", [c, wx, wy],
     np.where(c, wx, wy))

cx = np.array([-2.7, -0.5, 0.5, 2.7], dtype=np.float32)
case("cast_trunc", "%@i = tp.cast %@in0 : tensor<4xf32> -> tensor<4xi32>\n"
     "  %@out = tp.cast %@i : tensor<4xi32> -> tensor<4xf32>", [cx], np.trunc(cx))

u = f32(6)
sig = 1 / (1 + np.exp(-u))
erf = np.array([math.erf(v) for v in u], dtype=np.float32)
case("unary", "%@s = tp.sigmoid %@in0 : tensor<6xf32>\n"
     "  %@e = tp.erf %@in0 : tensor<6xf32>\n"
     "  %@out = tp.add %@s, %@e : tensor<6xf32>, tensor<6xf32> -> tensor<6xf32>", [u], sig + erf)
p = np.abs(f32(4)) + 0.5
case("pow_sqrt_div", "%@two = tp.constant dense<2.0> : tensor<f32>\n"
     "  %@sq = tp.pow %@in0, %@two : tensor<4xf32>, tensor<f32> -> tensor<4xf32>\n"
     "  %@rt = tp.sqrt %@sq : tensor<4xf32>\n"
     "  %@out = tp.div %@sq, %@rt : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>", [p], p)

t = f32(2, 3, 4)
case("transpose_reshape", "%@tr = tp.transpose %@in0 {perm = array<i64: 2, 0, 1>} "
     ": tensor<2x3x4xf32> -> tensor<4x2x3xf32>\n"
     "  %@out = tp.reshape %@tr : tensor<4x2x3xf32> -> tensor<3x8xf32>", [t],
     t.transpose(2, 0, 1).reshape(3, 8))
s = f32(4, 6)
case("slice_concat", "%@sl = tp.slice %@in0 {starts = array<i64: 1, 0>, limits = array<i64: 4, 6>, "
     "steps = array<i64: 2, 3>} : tensor<4x6xf32> -> tensor<2x2xf32>\n"
     "  %@out = tp.concat %@sl, %@sl {axis = 0 : i64} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>",
     [s], np.concatenate([s[1:4:2, 0:6:3]] * 2, 0))
ex = f32(1, 3)
case("expand_relu", "%@ex = tp.expand %@in0 : tensor<1x3xf32> -> tensor<2x3xf32>\n"
     "  %@out = tp.relu %@ex : tensor<2x3xf32>", [ex], np.maximum(np.broadcast_to(ex, (2, 3)), 0))

print("""// GENERATED by Inputs/gen_numerics.py (numpy); do not edit by hand.
// Each case runs tp ops on constants through tp-lower-to-linalg, bufferizes,
// lowers to LLVM and runs under mlir-runner; it prints 1 when the largest
// absolute difference from numpy's result is below 1e-5.
// RUN: tp-opt %s --tp-lower-to-llvm \\
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \\
// RUN:   | FileCheck %s
""")
for name, _, _, _ in cases:
    print(f"// CHECK: {name}: 1")
print()
print("func.func @check(%got: tensor<?xf32>, %want: tensor<?xf32>) -> i1 {")
print("""  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %got, %c0 : tensor<?xf32>
  %zero = arith.constant 0.0 : f32
  %err = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %g = tensor.extract %got[%i] : tensor<?xf32>
    %w = tensor.extract %want[%i] : tensor<?xf32>
    %d = arith.subf %g, %w : f32
    %a = math.absf %d : f32
    %m = arith.maximumf %acc, %a : f32
    scf.yield %m : f32
  }
  %tol = arith.constant 1.0e-05 : f32
  %ok = arith.cmpf olt, %err, %tol : f32
  return %ok : i1
}""")
print()
print("func.func @main() {")
for name, body, inputs, expected in cases:
    expected = np.asarray(expected, dtype=np.float32)
    for i, a in enumerate(inputs):
        print(f"  %{name}_in{i} = tp.constant {literal(a)} : {mlir_type(a)}")
    print("  " + body.replace("%@", f"%{name}_"))
    print(f"  %{name}_want = tp.constant {literal(expected)} : {mlir_type(expected)}")
    n = expected.size
    flat_t = f"tensor<{n}xf32>"
    print(f"  %{name}_got_flat = tp.reshape %{name}_out : {mlir_type(expected)} -> {flat_t}")
    print(f"  %{name}_want_flat = tp.reshape %{name}_want : {mlir_type(expected)} -> {flat_t}")
    print(f"  %{name}_g = tensor.cast %{name}_got_flat : {flat_t} to tensor<?xf32>")
    print(f"  %{name}_w = tensor.cast %{name}_want_flat : {flat_t} to tensor<?xf32>")
    print(f"  %{name}_ok = func.call @check(%{name}_g, %{name}_w) : (tensor<?xf32>, tensor<?xf32>) -> i1")
    print(f'  vector.print str "{name}: "')
    print(f"  vector.print %{name}_ok : i1")
print("  return")
print("}")

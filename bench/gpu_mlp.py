#!/usr/bin/python3
"""A large MLP for the GPU benchmark (scripts/gpu-check.sh), GEMM-bound:
per layer l, y = relu(x W1 + b1) W2 + b2 + x with x [tokens, hidden],
W1 [hidden, ffn], W2 [ffn, hidden]: 4 * tokens * hidden * ffn flops in the
two GEMMs. Weights are named like PyTorch's (layers.<l>.fc1.weight), so the
Megatron plan is layers.*.fc1=colwise, layers.*.fc2=rowwise.

The weights are ONNX external data in <out>.data, next to a small graph
file: the graph can be compiled on one machine (--graph-only) and the
data (random, any values do for timing) and the input x.npy written where
the program runs (--data-only, which needs numpy alone).

  python3 bench/gpu_mlp.py [--graph-only|--data-only] out.onnx layers tokens hidden ffn
"""
import os
import sys

import numpy as np


def weights(layers, hidden, ffn):
    """(name, shape, scale) of every weight, in the data file's order."""
    for l in range(layers):
        p = f"layers.{l}."
        yield p + "fc1.weight", (hidden, ffn), hidden ** -0.5
        yield p + "fc1.bias", (ffn,), 0.1
        yield p + "fc2.weight", (ffn, hidden), ffn ** -0.5
        yield p + "fc2.bias", (hidden,), 0.1


def write_data(path, layers, tokens, hidden, ffn):
    """<path>.data (the weights, in order) and x.npy beside it."""
    rng = np.random.default_rng(0)
    with open(path + ".data", "wb") as f:
        for _, shape, scale in weights(layers, hidden, ffn):
            (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).tofile(f)
    np.save(os.path.join(os.path.dirname(os.path.abspath(path)), "x.npy"),
            np.random.default_rng(1).standard_normal((tokens, hidden), dtype=np.float32))


def write_graph(path, layers, tokens, hidden, ffn):
    from transformer import onnx_classes
    pb = onnx_classes(os.path.dirname(os.path.abspath(path)))
    m = pb.ModelProto(ir_version=8)
    m.opset_import.add(domain="", version=17)
    g = m.graph
    g.name = "gpu_mlp"
    offset = 0
    for name, shape, _ in weights(layers, hidden, ffn):
        t = g.initializer.add(name=name, data_type=pb.TensorProto.FLOAT, dims=list(shape))
        t.data_location = pb.TensorProto.EXTERNAL
        size = int(np.prod(shape)) * 4
        for key, value in (("location", os.path.basename(path) + ".data"),
                           ("offset", offset), ("length", size)):
            t.external_data.add(key=key, value=str(value))
        offset += size

    def value_info(field, name):
        vi = field.add(name=name)
        vi.type.tensor_type.elem_type = pb.TensorProto.FLOAT
        for d in (tokens, hidden):
            vi.type.tensor_type.shape.dim.add(dim_value=d)

    def node(op, inputs, output, name):
        g.node.add(op_type=op, name=name, input=inputs, output=[output])
        return output

    value_info(g.input, "x")
    value_info(g.output, "y")
    x = "x"
    for l in range(layers):
        p, s = f"layers.{l}.", f"/layers.{l}"
        h = node("MatMul", [x, p + "fc1.weight"], s + "/fc1/mm", s + "/fc1/MatMul")
        h = node("Add", [h, p + "fc1.bias"], s + "/fc1/out", s + "/fc1/Add")
        h = node("Relu", [h], s + "/relu", s + "/Relu")
        o = node("MatMul", [h, p + "fc2.weight"], s + "/fc2/mm", s + "/fc2/MatMul")
        o = node("Add", [o, p + "fc2.bias"], s + "/fc2/out", s + "/fc2/Add")
        x = node("Add", [x, o], "y" if l == layers - 1 else s + "/y", s + "/residual")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    args = sys.argv[1:]
    mode = args.pop(0) if args[0] in ("--graph-only", "--data-only") else ""
    out, layers, tokens, hidden, ffn = args[0], *map(int, args[1:5])
    if mode != "--data-only":
        write_graph(out, layers, tokens, hidden, ffn)
    if mode != "--graph-only":
        write_data(out, layers, tokens, hidden, ffn)

#!/usr/bin/python3
"""A large MLP for the GPU benchmark (scripts/gpu-check.sh), GEMM-bound:
per layer l, y = relu(x W1 + b1) W2 + b2 + x with x [tokens, hidden],
W1 [hidden, ffn], W2 [ffn, hidden]: 4 * tokens * hidden * ffn flops in the
two GEMMs. Weights are named like PyTorch's (layers.<l>.fc1.weight), so the
Megatron plan is layers.*.fc1=colwise, layers.*.fc2=rowwise.

  python3 bench/gpu_mlp.py out.onnx layers tokens hidden ffn
"""
import os
import sys

import numpy as np

from transformer import onnx_classes


def write_mlp(path, layers, tokens, hidden, ffn):
    pb = onnx_classes(os.path.dirname(os.path.abspath(path)))
    rng = np.random.default_rng(0)
    m = pb.ModelProto(ir_version=8)
    m.opset_import.add(domain="", version=17)
    g = m.graph
    g.name = "gpu_mlp"

    def init(name, shape, scale):
        t = g.initializer.add(name=name, data_type=pb.TensorProto.FLOAT, dims=list(shape))
        t.raw_data = (rng.standard_normal(shape, dtype=np.float32) * scale).tobytes()
        return name

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
        h = node("MatMul", [x, init(p + "fc1.weight", (hidden, ffn), hidden ** -0.5)],
                 s + "/fc1/mm", s + "/fc1/MatMul")
        h = node("Add", [h, init(p + "fc1.bias", (ffn,), 0.1)], s + "/fc1/out", s + "/fc1/Add")
        h = node("Relu", [h], s + "/relu", s + "/Relu")
        o = node("MatMul", [h, init(p + "fc2.weight", (ffn, hidden), ffn ** -0.5)],
                 s + "/fc2/mm", s + "/fc2/MatMul")
        o = node("Add", [o, init(p + "fc2.bias", (hidden,), 0.1)], s + "/fc2/out", s + "/fc2/Add")
        x = node("Add", [x, o], "y" if l == layers - 1 else s + "/y", s + "/residual")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    out, layers, tokens, hidden, ffn = sys.argv[1], *map(int, sys.argv[2:6])
    write_mlp(out, layers, tokens, hidden, ffn)
    np.save(os.path.join(os.path.dirname(os.path.abspath(out)), "x.npy"),
            np.random.default_rng(1).standard_normal((tokens, hidden), dtype=np.float32))

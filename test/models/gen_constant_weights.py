#!/usr/bin/python3
"""A model whose weights are Constant nodes, as exporters other than torch's
write them (paddle2onnx, tf2onnx on frozen graphs, hand-built graphs).

Run by hand with Debian's python3-torch and python3-onnx; CI uses the
committed outputs. The graph is a Keras-style two-layer MLP in TensorFlow's
naming: node scopes without a leading slash (`sequential/dense/MatMul`),
weights named after the variable reads that produced them
(`sequential/dense/MatMul/ReadVariableOp:0`, kernels stored [in, out]) and
held in `Constant` nodes, not initializers. One float Constant is not a
weight (a fixed per-feature scale multiplying the output): it stays a
constant, gets no gradient and no update.

    /usr/bin/python3 test/models/gen_constant_weights.py

Writes test/models/constant_weights/:
  model.onnx               opset 13, no initializers
  input_x.npy, output.npy  the input and the forward output (PyTorch)
  loss.npy                 mean(output**2)
  grads/<weight>.npy       d loss / d weight; '/' in a weight's name is
                           written %2F in its file name (tp-run's
                           --dump-grads / --compare-grads layout)
  output_after_step.npy    the forward output after one SGD step (lr 0.1,
                           the default of tp-compile --train), for the
                           model tp-run --save writes
"""
import os

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "constant_weights")
LR = 0.1

gen = torch.Generator().manual_seed(4321)
x = torch.randn(4, 16, generator=gen)
weights = {
    "sequential/dense/MatMul/ReadVariableOp:0": torch.randn(16, 32, generator=gen) * 0.3,
    "sequential/dense/BiasAdd/ReadVariableOp:0": torch.randn(32, generator=gen) * 0.1,
    "sequential/dense_1/MatMul/ReadVariableOp:0": torch.randn(32, 8, generator=gen) * 0.3,
    "sequential/dense_1/BiasAdd/ReadVariableOp:0": torch.randn(8, generator=gen) * 0.1,
}
scale = torch.linspace(0.5, 1.5, 8)
w0, b0, w1, b1 = weights.values()


def forward(ws):
    w0, b0, w1, b1 = ws
    return (torch.relu(x @ w0 + b0) @ w1 + b1) * scale


def constant(name, t):
    return helper.make_node("Constant", [], [name], name=name.rsplit(":", 1)[0] + "/Const",
                            value=numpy_helper.from_array(t.numpy().astype(np.float32), name))


nodes = [constant(n, t) for n, t in weights.items()]
nodes.append(constant("sequential/scale/Const:0", scale))
names = list(weights)
nodes += [
    helper.make_node("MatMul", ["x", names[0]], ["sequential/dense/MatMul:0"],
                     name="sequential/dense/MatMul"),
    helper.make_node("Add", ["sequential/dense/MatMul:0", names[1]], ["sequential/dense/BiasAdd:0"],
                     name="sequential/dense/BiasAdd"),
    helper.make_node("Relu", ["sequential/dense/BiasAdd:0"], ["sequential/dense/Relu:0"],
                     name="sequential/dense/Relu"),
    helper.make_node("MatMul", ["sequential/dense/Relu:0", names[2]], ["sequential/dense_1/MatMul:0"],
                     name="sequential/dense_1/MatMul"),
    helper.make_node("Add", ["sequential/dense_1/MatMul:0", names[3]],
                     ["sequential/dense_1/BiasAdd:0"], name="sequential/dense_1/BiasAdd"),
    helper.make_node("Mul", ["sequential/dense_1/BiasAdd:0", "sequential/scale/Const:0"], ["output"],
                     name="sequential/scale/mul"),
]
graph = helper.make_graph(
    nodes, "sequential",
    [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 16])],
    [helper.make_tensor_value_info("output", onnx.TensorProto.FLOAT, [4, 8])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_constant_weights.py")
onnx.checker.check_model(model)

os.makedirs(os.path.join(HERE, "grads"), exist_ok=True)
onnx.save(model, os.path.join(HERE, "model.onnx"))
params = [t.clone().requires_grad_(True) for t in weights.values()]
out = forward(params)
loss = (out ** 2).mean()
loss.backward()
np.save(os.path.join(HERE, "input_x.npy"), x.numpy())
np.save(os.path.join(HERE, "output.npy"), out.detach().numpy())
np.save(os.path.join(HERE, "loss.npy"), loss.detach().numpy().astype(np.float32))
for name, p in zip(weights, params):
    np.save(os.path.join(HERE, "grads", name.replace("%", "%25").replace("/", "%2F") + ".npy"),
            p.grad.numpy())
with torch.no_grad():
    stepped = forward([p - LR * p.grad for p in params])
np.save(os.path.join(HERE, "output_after_step.npy"), stepped.numpy())
print(f"constant_weights: loss {loss.item():.6f}")

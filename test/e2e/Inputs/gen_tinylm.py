#!/usr/bin/python3
"""A tiny language model for the cross-entropy tests, with float64 numpy
references written from the formulas (not by tp).

tinylm: ids[4, 8] -> emb (Gather, vocab 32, dim 16) -> fc1 (16->32) -> Relu
-> fc2 (32->16) -> + emb residual -> head (16->32) -> logits[4, 8, 32].
Linear layers are exported like PyTorch does on 3-D input: the [out, in]
weight, a Transpose and a MatMul.

Writes into argv[1]: tinylm.onnx, ids.npy, labels.npy, loss.npy,
grad_<w>.npy (PyTorch's cross_entropy, mean over the 32 labels),
sgd1_<w>.npy (one SGD step, lr 0.1), and for three steps on three batches:
ids3.npy, labels3.npy ([12, 8]: one batch per step), steps3_loss.npy (the
third step's loss) and steps3_<w>.npy (the weights after three steps).
labels_padded.npy (-100 at 12 places, unevenly over the batch),
padded_loss.npy and padded_grad_<w>.npy. Also `compare-step1`,
`compare-steps3`, `compare-padded`: the tp-run --compare arguments for those
references. The backward formulas are checked here against
central differences.
"""
import os
import subprocess
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
B, S, V, D, H = 4, 8, 32, 16, 32
LR = 0.1

w0 = {
    "emb.weight": rng.standard_normal((V, D)) * 0.5,
    "fc1.weight": rng.standard_normal((H, D)) * 0.3,
    "fc1.bias": rng.standard_normal(H) * 0.1,
    "fc2.weight": rng.standard_normal((D, H)) * 0.3,
    "fc2.bias": rng.standard_normal(D) * 0.1,
    "head.weight": rng.standard_normal((V, D)) * 0.3,
}
w0 = {k: v.astype(np.float32).astype(np.float64) for k, v in w0.items()}


def forward(w, ids):
    e = w["emb.weight"][ids]
    h = e @ w["fc1.weight"].T + w["fc1.bias"]
    r = np.maximum(h, 0)
    z = r @ w["fc2.weight"].T + w["fc2.bias"] + e
    return e, h, r, z, z @ w["head.weight"].T


def loss_and_grads(w, ids, labels):
    e, h, r, z, logits = forward(w, ids)
    shifted = logits - logits.max(-1, keepdims=True)
    lp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    # Labels of -100 (PyTorch's ignore_index) count neither in the sum nor
    # in the mean's denominator.
    valid = (labels != -100)[..., None].astype(np.float64)
    n = valid.sum()
    onehot = np.eye(V)[np.where(labels == -100, 0, labels)] * valid
    loss = -(onehot * lp).sum() / n
    dlogits = (np.exp(lp) - onehot) * valid / n
    g = {}
    flat = lambda a: a.reshape(-1, a.shape[-1])
    g["head.weight"] = flat(dlogits).T @ flat(z)
    dz = dlogits @ w["head.weight"]
    g["fc2.bias"] = flat(dz).sum(0)
    g["fc2.weight"] = flat(dz).T @ flat(r)
    dh = (dz @ w["fc2.weight"]) * (h > 0)
    g["fc1.bias"] = flat(dh).sum(0)
    g["fc1.weight"] = flat(dh).T @ flat(e)
    de = dh @ w["fc1.weight"] + dz
    g["emb.weight"] = np.zeros_like(w["emb.weight"])
    np.add.at(g["emb.weight"], ids.ravel(), flat(de))
    return loss, g


def check_against_finite_differences(w, ids, labels):
    _, g = loss_and_grads(w, ids, labels)
    for name in w:
        for idx in [tuple(rng.integers(0, s) for s in w[name].shape) for _ in range(3)]:
            plus = {k: v.copy() for k, v in w.items()}
            minus = {k: v.copy() for k, v in w.items()}
            plus[name][idx] += 1e-6
            minus[name][idx] -= 1e-6
            fd = (loss_and_grads(plus, ids, labels)[0] -
                  loss_and_grads(minus, ids, labels)[0]) / 2e-6
            assert abs(fd - g[name][idx]) < 1e-6 + 1e-4 * abs(fd), (name, idx, fd, g[name][idx])


def save(name, a, dtype=np.float32):
    np.save(os.path.join(out, name), np.asarray(a).astype(dtype))


ids = rng.integers(0, V, (B, S))
labels = rng.integers(0, V, (B, S))
check_against_finite_differences(w0, ids, labels)

def write_model(path, with_loss=False):
    """Binary ONNX through protoc's Python classes for onnx.proto (ONNX's
    text syntax has no dotted names like PyTorch's `emb.weight`). With the
    loss, as PyTorch exports cross_entropy on [B, S, V] logits: the classes
    moved to dim 1, SoftmaxCrossEntropyLoss against a `labels` input."""
    subprocess.run(["protoc", f"--python_out={out}", "-I/usr/include/onnx",
                    "/usr/include/onnx/onnx.proto"], check=True)
    sys.path.insert(0, out)
    import onnx_pb2 as pb

    m = pb.ModelProto(ir_version=8)
    m.opset_import.add(domain="", version=13)
    g = m.graph
    g.name = "tinylm"
    for k, v in w0.items():
        t = g.initializer.add(name=k, data_type=pb.TensorProto.FLOAT,
                              dims=list(v.shape))
        t.raw_data = v.astype("<f4").tobytes()

    def value_info(field, name, elem, shape):
        vi = field.add(name=name)
        vi.type.tensor_type.elem_type = elem
        vi.type.tensor_type.shape.SetInParent()  # a scalar has an empty shape
        for d in shape:
            vi.type.tensor_type.shape.dim.add(dim_value=d)

    value_info(g.input, "ids", pb.TensorProto.INT64, (B, S))
    if with_loss:
        value_info(g.input, "labels", pb.TensorProto.INT64, (B, S))
        value_info(g.output, "loss", pb.TensorProto.FLOAT, ())
    else:
        value_info(g.output, "logits", pb.TensorProto.FLOAT, (B, S, V))

    def node(op, inputs, output, **ints):
        n = g.node.add(op_type=op, name="/" + output, input=inputs, output=[output])
        for k, v in ints.items():
            a = n.attribute.add(name=k)
            if isinstance(v, list):
                a.type, a.ints[:] = pb.AttributeProto.INTS, v
            else:
                a.type, a.i = pb.AttributeProto.INT, v

    node("Gather", ["emb.weight", "ids"], "e", axis=0)
    node("Transpose", ["fc1.weight"], "t1", perm=[1, 0])
    node("MatMul", ["e", "t1"], "m1")
    node("Add", ["m1", "fc1.bias"], "h")
    node("Relu", ["h"], "r")
    node("Transpose", ["fc2.weight"], "t2", perm=[1, 0])
    node("MatMul", ["r", "t2"], "m2")
    node("Add", ["m2", "fc2.bias"], "u")
    node("Add", ["u", "e"], "z")
    node("Transpose", ["head.weight"], "th", perm=[1, 0])
    node("MatMul", ["z", "th"], "logits")
    if with_loss:
        node("Transpose", ["logits"], "scores", perm=[0, 2, 1])
        node("SoftmaxCrossEntropyLoss", ["scores", "labels"], "loss")
        g.node[-1].attribute.add(name="reduction", type=pb.AttributeProto.STRING,
                                 s=b"mean")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


write_model(os.path.join(out, "tinylm.onnx"))
write_model(os.path.join(out, "tinylm_loss.onnx"), with_loss=True)
save("ids.npy", ids, np.int64)
save("labels.npy", labels, np.int64)
loss, g = loss_and_grads(w0, ids, labels)
save("loss.npy", loss)
for k in w0:
    save(f"grad_{k}.npy", g[k])
    save(f"sgd1_{k}.npy", w0[k] - LR * g[k])

# Three SGD steps, one batch each.
ids3 = rng.integers(0, V, (3 * B, S))
labels3 = rng.integers(0, V, (3 * B, S))
save("ids3.npy", ids3, np.int64)
save("labels3.npy", labels3, np.int64)
w = {k: v.copy() for k, v in w0.items()}
for step in range(3):
    batch = slice(step * B, (step + 1) * B)
    loss, g = loss_and_grads(w, ids3[batch], labels3[batch])
    w = {k: w[k] - LR * g[k] for k in w}
save("steps3_loss.npy", loss)
for k in w:
    save(f"steps3_{k}.npy", w[k])

# Padded labels (-100), 3 on the first two rows (the first of two
# data-parallel ranks), 9 on the last two: the mean is over the 20 others.
padded = labels.copy()
padded[0, 5:] = -100
padded[2, 2:] = -100
padded[3, 7:] = -100
save("labels_padded.npy", padded, np.int64)
loss, g = loss_and_grads(w0, ids, padded)
save("padded_loss.npy", loss)
for k in w0:
    save(f"padded_grad_{k}.npy", g[k])

with open(os.path.join(out, "compare-padded"), "w") as f:
    f.write(" ".join([f"--compare loss={out}/padded_loss.npy"] +
                     [f"--compare grad_{k}={out}/padded_grad_{k}.npy" for k in w0]))
with open(os.path.join(out, "compare-step1"), "w") as f:
    f.write(" ".join([f"--compare loss={out}/loss.npy"] +
                     [f"--compare grad_{k}={out}/grad_{k}.npy" for k in w0] +
                     [f"--compare {k}={out}/sgd1_{k}.npy" for k in w0]))
with open(os.path.join(out, "compare-steps3"), "w") as f:
    f.write(" ".join([f"--compare loss={out}/steps3_loss.npy"] +
                     [f"--compare {k}={out}/steps3_{k}.npy" for k in w0]))

#!/usr/bin/python3
"""PyTorch autocast references for tp's bf16 mixed precision (--precision bf16).

Run by hand with Debian's python3-torch (1.13); CI uses the committed
outputs. The models are gen_real_exports.py's (same classes, seeds and
inputs, checked against its committed fp32 loss), trained as users train in
bf16 on a CPU:

    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(ids), labels)
    loss.backward()          # fp32 weights and gradients

    /usr/bin/python3 test/models/gen_autocast_refs.py [family ...]

Each family folder (gpt2, llama) gets bf16/:
  loss.npy                the autocast loss of one step
  grads/<init>.npy        its gradients, keyed by model.onnx's initializers
                          (as gen_real_exports.py's grads/)
  sgd20.txt, sgd20_f32.txt  20 SGD steps (lr 0.1) on the same batch, under
                          autocast and in fp32, as `step k: loss v` lines
                          (tp-run --steps' format)
and resnet (torchvision's ResNet, eval mode) gets bf16/output.npy: its
forward under autocast.
"""
import copy
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

import gen_real_exports as real

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ("gpt2", "llama")


def lm_loss(model, ids, labels, autocast):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        out = model(ids)
    return F.cross_entropy(out.float().reshape(-1, out.shape[-1]), labels.reshape(-1))


def sgd_losses(model, ids, labels, autocast, steps=20, lr=0.1):
    m = copy.deepcopy(model)
    lines = []
    for k in range(steps):
        m.zero_grad()
        loss = lm_loss(m, ids, labels, autocast)
        loss.backward()
        lines.append(f"step {k + 1}: loss {loss.item():.8g}")
        with torch.no_grad():
            for p in m.parameters():
                p -= lr * p.grad
    return "\n".join(lines) + "\n"


def export(name):
    model, inputs, kind, _ = real.families()[name]()
    real.init_norms(model, torch.Generator().manual_seed(1236))
    model.eval()
    d = os.path.join(HERE, name)
    ids = torch.from_numpy(np.load(os.path.join(d, "input_input_ids.npy")))
    labels = torch.from_numpy(np.load(os.path.join(d, "labels.npy")))
    f32 = lm_loss(model, ids, labels, autocast=False).item()
    ref = float(np.load(os.path.join(d, "loss.npy")))
    if abs(f32 - ref) > 1e-5 * abs(ref):
        sys.exit(f"{name}: fp32 loss {f32} is not the committed {ref}: the "
                 "model differs from gen_real_exports.py's")
    out = os.path.join(d, "bf16")
    os.makedirs(os.path.join(out, "grads"), exist_ok=True)
    for f in os.listdir(os.path.join(out, "grads")):
        os.remove(os.path.join(out, "grads", f))
    model.zero_grad()
    loss = lm_loss(model, ids, labels, autocast=True)
    loss.backward()
    np.save(os.path.join(out, "loss.npy"), np.float32(loss.item()))
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
    for init, g in real.initializer_grads(os.path.join(d, "model.onnx"), model, grads).items():
        np.save(os.path.join(out, "grads", init + ".npy"),
                np.ascontiguousarray(g, dtype=np.float32))
    for file, autocast in (("sgd20.txt", True), ("sgd20_f32.txt", False)):
        with open(os.path.join(out, file), "w") as f:
            f.write(sgd_losses(model, ids, labels, autocast))
    print(f"{name}: fp32 loss {f32:.6f}, autocast loss {loss.item():.6f}")


def export_forward(name):
    model, inputs, _, _ = real.families()[name]()
    real.init_norms(model, torch.Generator().manual_seed(1236))
    model.eval()
    d = os.path.join(HERE, name)
    args = [torch.from_numpy(np.load(os.path.join(d, f"input_{n}.npy"))) for n in inputs]
    with torch.no_grad():
        f32 = model(*args).numpy()
        ref = np.load(os.path.join(d, "output.npy"))
        if np.abs(f32 - ref).max() > 1e-5 * np.abs(ref).max():
            sys.exit(f"{name}: the fp32 output is not the committed one")
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(*args).float().numpy()
    os.makedirs(os.path.join(d, "bf16"), exist_ok=True)
    np.save(os.path.join(d, "bf16", "output.npy"), out)
    rel = np.abs(out - f32).max() / np.abs(f32).max()
    print(f"{name}: autocast output, {rel:.3g} relative from fp32")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    for name in sys.argv[1:] or FAMILIES + ("resnet",):
        if name == "resnet":
            export_forward(name)
        else:
            export(name)

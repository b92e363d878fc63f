#!/usr/bin/python3
"""Models whose plans split dims unevenly (test/models/uneven/).

Run by hand with Debian's python3-torch and python3-onnx; CI uses the
committed outputs. Exported by torch.onnx.export with its defaults, nothing
renamed.

    /usr/bin/python3 test/models/gen_uneven.py

  gpt2_v50257/  gen_real_exports.py's GPT-2 with GPT-2's real vocabulary
                (50257: no mesh of 2, 3 or 4 divides it), hidden 8, 2 heads,
                1 layer, tied LM head; batch 3 (uneven over dp=2), seq 3;
                cross entropy against labels.npy
  mlp_h100/     fc1 = Linear(100, 100), ReLU, fc2 = Linear(100, 100) on a
                batch of 6: hidden 100 over tp=3 (34, 34, 32), the batch
                over dp=4 (2, 2, 2, 0); loss mean(output ** 2)

Each folder: model.onnx, input_<name>.npy, output.npy, loss.npy,
grads/<initializer>.npy (keyed by ONNX initializer, as in
gen_real_exports.py), modules.txt.
"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_real_exports import GPT2LMHeadModel, init_norms, initializer_grads

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "uneven")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(100, 100)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(100, 100)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def export(name, model, inputs, labels=None):
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "grads"), exist_ok=True)
    for f in os.listdir(os.path.join(d, "grads")):
        os.remove(os.path.join(d, "grads", f))
    model.eval()
    path = os.path.join(d, "model.onnx")
    names = list(inputs)
    torch.onnx.export(model, tuple(inputs.values()), path, opset_version=13,
                      input_names=names, output_names=["output"])
    onnx.checker.check_model(onnx.load(path))
    for n, t in inputs.items():
        np.save(os.path.join(d, f"input_{n}.npy"), t.numpy())
    out = model(*inputs.values())
    np.save(os.path.join(d, "output.npy"), out.detach().numpy())
    if labels is not None:
        np.save(os.path.join(d, "labels.npy"), labels.numpy())
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1))
    else:
        loss = (out ** 2).mean()
    np.save(os.path.join(d, "loss.npy"), loss.detach().numpy().astype(np.float32))
    model.zero_grad()
    loss.backward()
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
    for init, g in initializer_grads(path, model, grads).items():
        np.save(os.path.join(d, "grads", init + ".npy"),
                np.ascontiguousarray(g, dtype=np.float32))
    with open(os.path.join(d, "modules.txt"), "w") as f:
        for n, m in model.named_modules():
            if n:
                f.write(f"{n} {type(m).__name__}\n")
    print(f"{name}: loss {loss.item():.6f}, output {list(out.shape)}")


def main():
    gen = torch.Generator().manual_seed(1235)
    torch.manual_seed(1234)
    vocab = 50257
    gpt2 = GPT2LMHeadModel(dict(vocab_size=vocab, n_positions=8, n_embd=8,
                                n_head=2, n_layer=1))
    init_norms(gpt2, torch.Generator().manual_seed(1236))
    ids = torch.randint(0, vocab, (3, 3), generator=gen)
    labels = torch.randint(0, vocab, (3, 3), generator=gen)
    export("gpt2_v50257", gpt2, {"input_ids": ids}, labels)

    torch.manual_seed(1234)
    export("mlp_h100", MLP(), {"x": torch.randn(6, 100, generator=gen)})


if __name__ == "__main__":
    main()

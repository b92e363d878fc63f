#!/usr/bin/python3
"""A freshly initialized encoder, exported as a user exports it: two
nn.TransformerEncoderLayer (hidden 64, 4 heads, ffn 128, batch_first),
default initialization (nothing perturbed), torch.onnx.export with its
defaults in eval mode. The exporter merges initializers of equal value: the
two layers' zero in_proj_bias and out_proj.bias and their LayerNorms' ones
and zeros become one initializer each, read by both layers.

Run by hand with Debian's python3-torch (1.13); CI uses the outputs:

    /usr/bin/python3 test/models/gen_fresh_encoder.py

writes fresh_encoder/model.onnx, input_x.npy, output.npy (PyTorch's
forward output) and torch_steps.txt: PyTorch's losses, mean(output ** 2),
over three SGD steps (lr 0.1) on input_x, as `tp-run --steps` prints them.
"""
import os

import numpy as np
import torch

from torch_steps import write_torch_steps

HERE = os.path.dirname(os.path.abspath(__file__))


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([
            torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                             batch_first=True)
            for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


torch.manual_seed(0)
model = Encoder().eval()
x = torch.randn(2, 17, 64)
out = os.path.join(HERE, "fresh_encoder")
os.makedirs(out, exist_ok=True)
torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                  input_names=["x"], output_names=["output"])
np.save(os.path.join(out, "input_x.npy"), x.numpy())
with torch.no_grad():
    np.save(os.path.join(out, "output.npy"), model(x).numpy())

# PyTorch's own training: every parameter apart.
model.train()
write_torch_steps(os.path.join(out, "torch_steps.txt"), model,
                  lambda m, step: (m(x) ** 2).mean(), lr=0.1)

#!/usr/bin/python3
"""A freshly initialized encoder, exported as a user exports it: two
nn.TransformerEncoderLayer (hidden 64, 4 heads, ffn 128, batch_first),
default initialization (nothing perturbed), torch.onnx.export with its
defaults in eval mode. The exporter merges initializers of equal value: the
two layers' zero in_proj_bias and out_proj.bias and their LayerNorms' ones
and zeros become one initializer each, read by both layers.

Run by hand with Debian's python3-torch (1.13); CI uses the outputs:

    /usr/bin/python3 test/models/gen_fresh_encoder.py

writes fresh_encoder/model.onnx, input_x.npy and output.npy (PyTorch's
forward output).
"""
import os

import numpy as np
import torch

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

#!/usr/bin/python3
"""A freshly initialized torchvision VisionTransformer, exported as a user
exports it: 2 layers, image 32, patch 8, 4 heads, hidden 64, MLP 128,
10 classes, default initialization (nothing perturbed), torch.onnx.export
with its defaults in eval mode. The exporter merges initializers of equal
value: the layers' zero in_proj_bias (and the zero head) and their
LayerNorms' ones and zeros become one initializer each.

Run by hand with Debian's python3-torch and python3-torchvision; CI uses
the outputs:

    /usr/bin/python3 test/models/gen_fresh_vit.py

writes fresh_vit/model.onnx, input_x.npy, labels.npy, output.npy
(PyTorch's forward) and torch_steps.txt: PyTorch's losses (cross entropy
against labels) over three SGD steps (lr 0.05), as `tp-run --steps` prints
them.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

from torch_steps import write_torch_steps

HERE = os.path.dirname(os.path.abspath(__file__))

torch.manual_seed(0)
model = torchvision.models.VisionTransformer(
    image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
    mlp_dim=128, num_classes=10).eval()
x = torch.randn(2, 3, 32, 32)
labels = torch.tensor([3, 7])
out = os.path.join(HERE, "fresh_vit")
os.makedirs(out, exist_ok=True)
torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                  input_names=["x"], output_names=["output"])
np.save(os.path.join(out, "input_x.npy"), x.numpy())
np.save(os.path.join(out, "labels.npy"), labels.numpy())
with torch.no_grad():
    np.save(os.path.join(out, "output.npy"), model(x).numpy())

# PyTorch's own training: every parameter apart.
model.train()
write_torch_steps(os.path.join(out, "torch_steps.txt"), model,
                  lambda m, step: F.cross_entropy(m(x), labels), lr=0.05)

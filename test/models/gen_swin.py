#!/usr/bin/python3
"""torchvision's SwinTransformer at a small config (patch 4, embed 32, two
stages of one block, 2 heads each, window 4, 10 classes, image 32),
random initialization, exported with torch.onnx.export's defaults at
opset 17. Its relative position index uses torch.flip, which exports a
Slice with step -1.

Run by hand with Debian's python3-torch and python3-torchvision; CI uses
the outputs:

    /usr/bin/python3 test/models/gen_swin.py

writes swin/model.onnx, input_x.npy and output.npy (PyTorch's forward).
"""
import os

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))

torch.manual_seed(0)
model = torchvision.models.SwinTransformer(
    patch_size=[4, 4], embed_dim=32, depths=[1, 1], num_heads=[2, 2],
    window_size=[4, 4], num_classes=10).eval()
x = torch.randn(2, 3, 32, 32)
out = os.path.join(HERE, "swin")
os.makedirs(out, exist_ok=True)
torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                  input_names=["x"], output_names=["output"], opset_version=17)
np.save(os.path.join(out, "input_x.npy"), x.numpy())
with torch.no_grad():
    np.save(os.path.join(out, "output.npy"), model(x).numpy())

#!/usr/bin/python3
"""Two exports whose Linear layers a plan must find although their weights
do not sit where a plain Linear's do, random initialization,
torch.onnx.export's defaults at opset 13:

- convnext/: torchvision's ConvNeXt at a small config (two stages of one
  block, 16 and 32 channels, 10 classes, image 32). Each block's Linears
  (block.3, block.5) run on channels-last 4-D activations, so the
  exporter folds their weights into `onnx::MatMul_<n>` initializers.
- encoder_norm_first/: nn.TransformerEncoder of two
  nn.TransformerEncoderLayer(batch_first=True, norm_first=True), in
  eval() without the fast path: its attention's out_proj is a module of
  nn.MultiheadAttention's, whose weight the exporter also folds.

Run by hand with Debian's python3-torch and python3-torchvision; CI uses
the outputs:

    /usr/bin/python3 test/models/gen_linear_plans.py

writes <folder>/model.onnx, input_x.npy and output.npy (PyTorch's forward).
"""
import os

import numpy as np
import torch
import torchvision
from torchvision.models.convnext import CNBlockConfig

HERE = os.path.dirname(os.path.abspath(__file__))


def export(name, model, x):
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                      input_names=["x"], output_names=["output"], opset_version=13)
    np.save(os.path.join(out, "input_x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, "output.npy"), model(x).numpy())


torch.manual_seed(0)
convnext = torchvision.models.ConvNeXt(
    [CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10).eval()
export("convnext", convnext, torch.randn(2, 3, 32, 32))

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True,
                                         norm_first=True)
encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
export("encoder_norm_first", encoder, torch.randn(2, 5, 32))

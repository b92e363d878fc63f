#!/usr/bin/python3
"""A freshly initialized torchvision ResNet (BasicBlocks, [1, 1, 1, 1],
narrowed as gen_real_exports.py's, 10 classes; default initialization:
every BatchNorm's weight 1, bias 0, running statistics 0 and 1), exported
as a user exports a module to train: in train() with
torch.onnx.export(..., training=TrainingMode.TRAINING) and its other
defaults (BatchNormalization with batch statistics).

Run by hand with Debian's python3-torch and python3-torchvision; CI uses
the outputs:

    /usr/bin/python3 test/models/gen_fresh_resnet.py

writes fresh_resnet/model.onnx, input_x.npy, labels.npy and
torch_steps.txt: PyTorch's losses (cross entropy, batch statistics over
the whole batch) over three SGD steps (lr 0.02), as `tp-run --steps`
prints them.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

from torch_steps import write_torch_steps

HERE = os.path.dirname(os.path.abspath(__file__))


class NarrowResNet(torchvision.models.ResNet):
    """torchvision's ResNet with layer widths 8, 16, 32, 64 (the stem and
    everything else as torchvision builds it)."""

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        return super()._make_layer(block, planes // 8, blocks, stride, dilate)


torch.manual_seed(0)
model = NarrowResNet(torchvision.models.resnet.BasicBlock, [1, 1, 1, 1])
model.fc = torch.nn.Linear(64, 10)  # torchvision sized it for 512 features
model.train()
x = torch.randn(4, 3, 64, 64)
labels = torch.tensor([1, 4, 7, 9])
out = os.path.join(HERE, "fresh_resnet")
os.makedirs(out, exist_ok=True)
# The export runs the module once: keep its running statistics fresh.
state = {k: v.clone() for k, v in model.state_dict().items()}
torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                  input_names=["x"], output_names=["output"],
                  training=torch.onnx.TrainingMode.TRAINING)
model.load_state_dict(state)
np.save(os.path.join(out, "input_x.npy"), x.numpy())
np.save(os.path.join(out, "labels.npy"), labels.numpy())

write_torch_steps(os.path.join(out, "torch_steps.txt"), model,
                  lambda m, step: F.cross_entropy(m(x), labels), lr=0.02)

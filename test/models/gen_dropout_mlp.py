#!/usr/bin/python3
"""An MLP with two training-mode Dropouts, exported as a user exports a
module in train(): torch.onnx.export(..., training=TrainingMode.TRAINING).

    drop_in (p=0.2) -> fc1 (16 -> 64) -> ReLU -> drop (p=0.5) -> fc2 (64 -> 16)

Run by hand with Debian's python3-torch (1.13); CI uses the outputs:

    /usr/bin/python3 test/models/gen_dropout_mlp.py

writes dropout_mlp/model.onnx, input_x.npy and torch_steps.txt: PyTorch's
losses, mean(output ** 2), over three SGD steps (lr 0.5) on input_x, as
`tp-run --steps` prints them, where PyTorch is given tp's masks (drawn by
python/tp/dropout.py for seed 0: Dropout node k of the graph is site k,
step k's masks are run k's).
"""
import importlib.util
import os

import numpy as np
import torch

from torch_steps import write_torch_steps

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "tp_dropout", os.path.join(HERE, "..", "..", "python", "tp", "dropout.py"))
tp_dropout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp_dropout)


class DropoutMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop_in = torch.nn.Dropout(0.2)
        self.fc1 = torch.nn.Linear(16, 64)
        self.act = torch.nn.ReLU()
        self.drop = torch.nn.Dropout(0.5)
        self.fc2 = torch.nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(self.drop_in(x)))))


def with_masks(model, x, step, seed=0):
    """The module's forward with tp's masks instead of torch's."""
    def drop(v, p, site):
        mask = torch.from_numpy(
            tp_dropout.dropout_mask(v.shape, p, seed, step, site))
        # As torch's dropout: input * (bernoulli mask / (1 - p)).
        return v * mask.to(v.dtype).div_(1 - p)
    h = drop(x, model.drop_in.p, 0)
    h = model.act(model.fc1(h))
    return model.fc2(drop(h, model.drop.p, 1))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = DropoutMLP().train()
    x = torch.randn(8, 16)
    out = os.path.join(HERE, "dropout_mlp")
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"),
                      input_names=["x"], output_names=["output"],
                      training=torch.onnx.TrainingMode.TRAINING)
    np.save(os.path.join(out, "input_x.npy"), x.numpy())
    write_torch_steps(os.path.join(out, "torch_steps.txt"), model,
                      lambda m, step: (with_masks(m, x, step) ** 2).mean(),
                      lr=0.5)

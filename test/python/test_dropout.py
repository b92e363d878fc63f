# RUN: %pytest %s
"""Dropout from Python follows the module's mode: in train() it drops with
tp's masks (Philox keyed by the seed, the run and each element's global
index: tp.dropout_mask), which are the same on every mesh, so that
PyTorch's own loop given those masks gives the same losses and weights; in
eval() it is the identity."""
import logging

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tp
from conftest import relative_error


class DropoutMLP(torch.nn.Module):
    """Two Dropouts: graph sites 0 (on the input) and 1 (on fc1's output,
    which tp=2 splits by columns)."""

    def __init__(self):
        super().__init__()
        self.drop_in = torch.nn.Dropout(0.2)
        self.fc1 = torch.nn.Linear(16, 64)
        self.drop = torch.nn.Dropout(0.5)
        self.fc2 = torch.nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(self.drop_in(x)))))


def with_masks(model, x, seed, run):
    """model's forward with tp's masks of `run` instead of torch's."""
    def drop(v, p, site):
        keep = torch.from_numpy(tp.dropout_mask(v.shape, p, seed, run, site))
        return v * keep.to(v.dtype).div_(1 - p)  # as torch's dropout scales
    h = torch.relu(model.fc1(drop(x, model.drop_in.p, 0)))
    return model.fc2(drop(h, model.drop.p, 1))


PLAN = {"fc1": tp.ColwiseParallel(), "fc2": tp.RowwiseParallel()}


@pytest.mark.parametrize("mesh,dp", [({"tp": 1}, None), ({"tp": 2}, None),
                                     ({"dp": 2, "tp": 2}, "dp")])
def test_dropout_trains_as_pytorch_given_tp_masks(mesh, dp):
    torch.manual_seed(0)
    model = DropoutMLP().train()
    reference = DropoutMLP().train()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g))
            for _ in range(5)]
    compiled = tp.parallelize_module(model, tp.DeviceMesh(mesh), PLAN,
                                     example_inputs=(data[0][0],),
                                     data_parallel=dp, seed=3)
    step = tp.train_step(compiled, loss="mse", optimizer=tp.SGD(lr=0.5))
    opt = torch.optim.SGD(reference.parameters(), lr=0.5)
    losses, want = [], []
    for run, (x, t) in enumerate(data):
        losses.append(step(x, t))
        opt.zero_grad()
        loss = F.mse_loss(with_masks(reference, x, 3, run), t)
        loss.backward()
        want.append(loss.item())
        # Each gradient is PyTorch's given the same masks: the backward
        # pass drew them again.
        grads = step.get_gradients()
        for name, p in reference.named_parameters():
            assert relative_error(grads[name], p.grad) < 1e-5, (run, name)
        opt.step()
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-7)
    state = compiled.state_dict()
    for name, value in reference.state_dict().items():
        assert relative_error(state[name], value) < 1e-5, name


def test_forward_follows_the_mode():
    torch.manual_seed(0)
    model = DropoutMLP().train()
    x = torch.randn(8, 16)
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), PLAN,
                                     example_inputs=(x,))
    # train(): each call draws the masks of its run (the forward program's
    # own count), and only the graph's output comes back.
    with torch.no_grad():
        for run in range(2):
            y = compiled(x)
            assert isinstance(y, torch.Tensor)
            assert relative_error(y, with_masks(model, x, 0, run)) < 1e-5
        # eval(): no Dropout, as PyTorch's eval forward.
        model.eval()
        assert relative_error(compiled(x), model(x)) < 1e-5


def test_modes_are_announced(caplog):
    torch.manual_seed(0)
    model = DropoutMLP().train()
    x = torch.randn(8, 16)
    with caplog.at_level(logging.INFO, logger="tp"):
        compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 1}), {},
                                         example_inputs=(x,), seed=9)
        model.eval()
        compiled(x)
    assert "train(): Dropout drop_in (p=0.2), drop (p=0.5) draws masks from " \
           "tp's generator (Philox, seed 9" in caplog.text
    assert "eval(): Dropout drop_in (p=0.2), drop (p=0.5) is the identity" \
        in caplog.text


def test_dropout_mask_reference():
    """Random123's known answers for philox4x32-10, and the keep rate."""
    words = tp.dropout.philox4x32(
        [np.array([0x243f6a88]), np.array([0x85a308d3]),
         np.array([0x13198a2e]), np.array([0x03707344])],
        [0xa4093822, 0x299f31d0])
    assert [int(w[0]) for w in words] == [0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                          0x24126ea1]
    words = tp.dropout.philox4x32([np.zeros(1, np.uint64)] * 4, [0, 0])
    assert [int(w[0]) for w in words] == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                          0x9b00dbd8]
    keep = tp.dropout_mask((256, 256), 0.1)
    assert abs(keep.mean() - 0.9) < 5 * np.sqrt(0.09 / keep.size)
    assert not np.array_equal(keep, tp.dropout_mask((256, 256), 0.1, step=1))

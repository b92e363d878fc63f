# RUN: %pytest %s
"""tp.train_step: a training loop fed batch by batch from Python gives the
losses of `tp-run --steps 20` on the same batches, PyTorch's gradients and
AdamW update at step 1, and weights (state_dict) that PyTorch loads and that
reproduce tp's outputs; save() writes an ONNX file tp compiles again."""
import os
import re
import subprocess

import numpy as np
import pytest
import torch

import tp
from conftest import TOOLS, relative_error

STEPS = 20


def batches(seed, count, x_shape, features):
    """A Python iterator of (inputs, targets), as a data loader gives: the
    targets, a function of the inputs, can be learned."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(count):
        x = torch.randn(*x_shape, generator=g)
        yield x, torch.tanh(x[..., :features])


def test_loop_matches_tp_run_steps(example, tmp_path):
    model, plan = example
    mesh = tp.DeviceMesh({"dp": 2, "tp": 2})
    data = list(batches(1, STEPS, (4, 16), 8))
    tp_model = tp.parallelize_module(model, mesh, plan, data_parallel="dp",
                                     example_inputs=(data[0][0],))
    step = tp.train_step(tp_model, loss="mse",
                         optimizer=tp.SGD(lr=0.05, momentum=0.9))
    losses = []
    for i, (x, t) in enumerate(iter(data)):
        losses.append(step(x, t))
        if i == 0:
            # Step 1's gradients are PyTorch autograd's.
            reference = torch.nn.functional.mse_loss(model(x), t)
            expected = torch.autograd.grad(reference, list(model.parameters()))
            grads = step.get_gradients()
            for (name, _), g in zip(model.named_parameters(), expected):
                assert relative_error(grads[name], g) < 1e-4, name
    assert losses[-1] < losses[0]

    # The same program under tp-run, one batch per step from files.
    program = step.program_dir
    name = [a["name"] for a in step._program._arguments if a["kind"] == "input"
            and a["name"] != "labels"][0]
    np.save(tmp_path / "x.npy", np.concatenate([x.numpy() for x, _ in data]))
    np.save(tmp_path / "t.npy", np.concatenate([t.numpy() for _, t in data]))
    run = subprocess.run(
        [os.path.join(TOOLS, "tp-run"), program, "--steps", str(STEPS),
         "--input", "%s=%s" % (name, tmp_path / "x.npy"),
         "--labels", str(tmp_path / "t.npy")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    tp_run = [float(v) for v in re.findall(r"step \d+: loss (\S+)", run.stdout)]
    assert len(tp_run) == STEPS
    for ours, theirs in zip(losses, tp_run):
        assert abs(ours - theirs) <= 1e-6 * abs(theirs)


def test_first_step_matches_pytorch_autograd_and_adamw(example):
    model, plan = example
    x, t = next(batches(2, 1, (4, 16), 8))
    tp_model = tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                                     example_inputs=(x,))
    step = tp.train_step(tp_model, loss="mse",
                         optimizer=tp.AdamW(lr=1e-2, weight_decay=0.01))
    loss = step(x, t)

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    reference = torch.nn.functional.mse_loss(model(x), t)
    reference.backward()
    assert abs(loss - reference.item()) <= 1e-5 * abs(reference.item())
    grads = step.get_gradients()
    assert sorted(grads) == sorted(n for n, _ in model.named_parameters())
    for name, p in model.named_parameters():
        assert relative_error(grads[name], p.grad) < 1e-4, name
    optimizer.step()
    trained = step.state_dict()
    for name, p in model.named_parameters():
        assert relative_error(trained[name], p.detach()) < 1e-5, name


def test_state_dict_loads_into_pytorch(tmp_path):
    # 3-D inputs: the exporter folds each Linear weight into a transposed
    # initializer (onnx::MatMul_<n>); state_dict() gives PyTorch's layout.
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.GELU(),
                                torch.nn.Linear(24, 16))
    plan = {"0": tp.ColwiseParallel(), "2": tp.RowwiseParallel()}
    data = list(batches(4, 5, (2, 6, 16), 16))
    tp_model = tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                                     example_inputs=(data[0][0],))
    step = tp.train_step(tp_model, loss="mse", optimizer=tp.SGD(lr=0.1))
    for x, t in data:
        step(x, t)
    state = step.state_dict()
    assert {k: tuple(v.shape) for k, v in state.items()} == \
        {k: tuple(v.shape) for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    x = data[0][0]
    # The compiled module's forward reads the trained weights too.
    assert relative_error(tp_model(x), model(x).detach()) < 1e-4

    # And back: PyTorch's weights into tp, then into a saved ONNX file.
    fresh = tp.parallelize_module(torch.nn.Sequential(
        torch.nn.Linear(16, 24), torch.nn.GELU(), torch.nn.Linear(24, 16)),
        tp.DeviceMesh({"tp": 2}), plan, example_inputs=(x,))
    fresh.load_state_dict(model.state_dict())
    assert relative_error(fresh(x), model(x).detach()) < 1e-4
    fresh.save(tmp_path / "trained.onnx")
    reloaded = tp.parallelize_module(str(tmp_path / "trained.onnx"),
                                     tp.DeviceMesh({"tp": 1}), {})
    assert relative_error(reloaded(x.numpy()), model(x).detach()) < 1e-4


class Blocks(torch.nn.Module):
    """Two blocks y = x + tanh(fc(x)): tanh's backward reads its output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.layers = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh())
            for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


def test_recompute_gives_the_same_gradients():
    model = Blocks()
    x, t = next(batches(4, 1, (4, 16), 16))
    grads = {}
    for recompute in ((), "layers.*"):
        tp_model = tp.parallelize_module(
            model, tp.DeviceMesh({"tp": 2}),
            {"layers.*.0": tp.ColwiseParallel()}, example_inputs=(x,))
        step = tp.train_step(tp_model, loss="mse", recompute=recompute)
        step(x, t)
        grads[recompute] = step.get_gradients()
    reference = torch.nn.functional.mse_loss(model(x), t)
    expected = torch.autograd.grad(reference, list(model.parameters()))
    for (name, _), g in zip(model.named_parameters(), expected):
        assert relative_error(grads["layers.*"][name], grads[()][name]) < 1e-6, name
        assert relative_error(grads["layers.*"][name], g) < 1e-4, name

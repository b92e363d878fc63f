# RUN: %pytest %s
"""Mixed precision from Python: parallelize_module(..., precision="bf16")
and train_step's precision / grad_reduce_dtype against torch.autocast, and
torch.bfloat16 tensors in and out of a bf16 ONNX model."""
import os

import numpy as np
import torch

import tp
from conftest import E2E_INPUTS, relative_error

# bf16 keeps 8 significant bits; PyTorch also rounds each Linear's output
# to bf16 where tp keeps the f32 sum (see test/e2e/bf16-train.test).
TOLERANCE = 2e-2


def batch(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 16, generator=g)
    return x, torch.tanh(x[:, :8])


def test_forward_and_step_match_autocast(example):
    model, plan = example
    x, t = batch(3)
    tp_model = tp.parallelize_module(model, tp.DeviceMesh({"dp": 2, "tp": 2}),
                                     plan, data_parallel="dp",
                                     example_inputs=(x,), precision="bf16")
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        reference = model(x).float()
    out = tp_model(x)
    assert out.dtype == torch.float32
    assert relative_error(out, reference) < TOLERANCE

    step = tp.train_step(tp_model, loss="mse", optimizer=tp.SGD(lr=0.1),
                         grad_reduce_dtype="bf16")
    loss = step(x, t)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = model(x)
    reference = torch.nn.functional.mse_loss(y.float(), t)
    reference.backward()
    assert abs(loss - reference.item()) <= TOLERANCE * abs(reference.item())
    grads = step.get_gradients()
    for name, p in model.named_parameters():
        assert relative_error(grads[name], p.grad) < TOLERANCE, name
    # The master weights stay f32, updated in f32.
    trained = step.state_dict()
    for name, p in model.named_parameters():
        assert trained[name].dtype == torch.float32
        assert relative_error(trained[name], p.detach() - 0.1 * grads[name]) \
            < 1e-6, name


def test_bad_precision(example):
    model, plan = example
    try:
        tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                              precision="fp8")
    except tp.Error as e:
        assert str(e) == "precision='fp8': f32 or bf16"
    else:
        raise AssertionError("precision='fp8' was accepted")


def test_bfloat16_tensors_in_and_out():
    # bfloat16 inputs and outputs (test/e2e/Inputs/bf16-io.onnxtxt): the
    # Cast rounds as PyTorch's .bfloat16() does, bit for bit.
    compiled = tp.parallelize_module(
        os.path.join(E2E_INPUTS, "bf16-io.onnxtxt"), tp.DeviceMesh({"tp": 1}))
    x = torch.randn(2, 6) * 3
    h = torch.randn(2, 4).bfloat16()
    out = compiled(x, h)
    rounded, widened, doubled = out if isinstance(out, tuple) else \
        (out["rounded"], out["widened"], out["doubled"])
    assert rounded.dtype == torch.bfloat16 and doubled.dtype == torch.bfloat16
    assert torch.equal(rounded, x.bfloat16())
    assert torch.equal(widened, h.float())
    assert torch.equal(doubled, h + h)

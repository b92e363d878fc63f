# RUN: %pytest %s
"""tp.parallelize_module: forward on 1, 2 and 4 in-process ranks against
PyTorch, for a torch.nn.Module (the issue's Linear/ReLU/Linear example,
torch tensors and numpy arrays in and out) and an ONNX file (the GPT-2
export of test/models/gpt2 with its named_modules() plan)."""
import json
import logging
import os

import numpy as np
import pytest
import torch

import tp
from conftest import E2E_INPUTS, MODELS, relative_error


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_issue_example(example, ranks):
    model, plan = example
    x = torch.randn(4, 16)
    tp_model = tp.parallelize_module(model, tp.DeviceMesh({"tp": ranks}), plan)
    y = tp_model(x)
    assert isinstance(y, torch.Tensor)
    assert relative_error(y, model(x).detach()) < 1e-4
    # numpy in, numpy out; the same compiled program.
    y_np = tp_model(x.numpy())
    assert isinstance(y_np, np.ndarray)
    np.testing.assert_array_equal(y_np, y.numpy())


def test_init_device_mesh_and_data_parallel(example):
    model, plan = example
    x = torch.randn(8, 16)
    mesh = tp.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    tp_model = tp.parallelize_module(model, mesh, plan, example_inputs=(x,),
                                     data_parallel="dp")
    assert relative_error(tp_model(x), model(x).detach()) < 1e-4


def test_progress_is_logged(example, caplog):
    model, plan = example
    caplog.set_level(logging.INFO, logger="tp")
    tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                          example_inputs=(torch.randn(4, 16),))
    stages = [r.getMessage() for r in caplog.records]
    assert any(s.startswith("exporting Sequential") for s in stages)
    assert "tp-compile: partitioning into the per-device program" in stages
    assert any(s.startswith("tp-compile: wrote ") for s in stages)


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_gpt2_export(ranks):
    gpt2 = os.path.join(MODELS, "gpt2")
    with open(os.path.join(E2E_INPUTS, "gpt2-plan.json")) as f:
        plan = json.load(f)["plan"]
    tp_model = tp.parallelize_module(os.path.join(gpt2, "model.onnx"),
                                     tp.DeviceMesh({"tp": ranks}), plan)
    ids = np.load(os.path.join(gpt2, "input_input_ids.npy"))
    logits = tp_model(ids)
    assert relative_error(logits, np.load(os.path.join(gpt2, "output.npy"))) < 1e-4

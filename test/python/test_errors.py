# RUN: %pytest %s
"""Bad input from Python: each a tp.Error with the command-line tools'
message, raised before anything runs."""
import os
import subprocess

import numpy as np
import pytest
import torch

import tp
from conftest import MODELS, TOOLS
from tp import _tprt


@pytest.fixture
def compiled(example):
    model, plan = example
    return tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                                 example_inputs=(torch.randn(4, 16),))


def test_plan_names_no_module(example):
    model, _ = example
    with pytest.raises(tp.Error, match=r"tp-compile: error: plan entry "
                       r"'fc9=colwise' \(--plan-entry\) matches no module; "
                       r"closest: 0, 1, 2"):
        tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}),
                              {"fc9": tp.ColwiseParallel()},
                              example_inputs=(torch.randn(4, 16),))


def test_wrong_input_shape(compiled):
    with pytest.raises(tp.Error, match=r"^input 'onnx::Gemm_0': expected "
                       r"4x16 f32, the array has 3x16 f32$"):
        compiled(torch.randn(3, 16))


def test_dtype_tp_does_not_take(compiled):
    with pytest.raises(tp.Error, match=r"^input 'onnx::Gemm_0': numpy dtype "
                       r"complex64 is not a dtype tp takes"):
        compiled(np.zeros((4, 16), np.complex64))
    with pytest.raises(tp.Error, match=r"expected 4x16 f32, the array has "
                       r"4x16 f64$"):
        compiled(torch.randn(4, 16, dtype=torch.float64))
    with pytest.raises(tp.Error, match=r"expected 4x16 f32, the array has "
                       r"4x16 bf16$"):
        compiled(torch.randn(4, 16).bfloat16())


def test_wrong_number_of_inputs(compiled):
    with pytest.raises(tp.Error, match=r"the module takes 1 input\(s\) "
                       r"\(onnx::Gemm_0\), got 2"):
        compiled(torch.randn(4, 16), torch.randn(4, 16))


def test_bad_plan_and_mesh(example):
    model, _ = example
    with pytest.raises(tp.Error, match=r"plan entry '0': 'diagonal' is not a "
                       r"style"):
        tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), {"0": "diagonal"})
    with pytest.raises(tp.Error, match=r"axis 'tp' has size 0"):
        tp.DeviceMesh({"tp": 0})
    with pytest.raises(tp.Error, match=r"data_parallel='dp' is not an axis "
                       r"of the mesh tp=2"):
        tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), {},
                              data_parallel="dp")
    with pytest.raises(tp.Error, match=r"no such file"):
        tp.parallelize_module("missing.onnx", tp.DeviceMesh({"tp": 2}), {})


def test_state_dict_mismatch(compiled, example):
    model, _ = example
    state = model.state_dict()
    state["0.weight"] = torch.zeros(16, 32)
    with pytest.raises(tp.Error, match=r"state_dict\['0.weight'\]: weight "
                       r"'0.weight': expected 32x16 f32, the array has 16x32 f32"):
        compiled.load_state_dict(state)
    del state["0.weight"]
    state["extra"] = torch.zeros(1)
    with pytest.raises(tp.Error, match=r"missing keys: 0.weight; unexpected "
                       r"keys: extra"):
        compiled.load_state_dict({k: v for k, v in state.items()})


def test_training_step_errors(compiled):
    step = tp.train_step(compiled, loss="cross_entropy", optimizer=tp.SGD(lr=0.1))
    with pytest.raises(tp.Error, match=r"compares with labels"):
        step(torch.randn(4, 16))
    with pytest.raises(tp.Error, match=r"loss 'hinge': mse, cross_entropy or output"):
        tp.train_step(compiled, loss="hinge")
    with pytest.raises(tp.Error, match=r"get_gradients: run a step first"):
        tp.train_step(compiled).get_gradients()


def test_pipeline_program_refused(tmp_path):
    """A program cut into pipeline stages runs under tp-run only."""
    out = str(tmp_path / "pp") + "/"
    subprocess.run([os.path.join(TOOLS, "tp-compile"),
                    os.path.join(MODELS, "mlp", "model.onnx"), "--mesh", "pp=2",
                    "--pipeline", "axis=pp,split_before=fc2", "-o", out],
                   check=True)
    with pytest.raises(tp.Error, match=r"a pipeline program \(stages over mesh "
                       r"axis 'pp'\); the Python package does not run "
                       r"pipelines yet, tp-run does"):
        _tprt.Session(out, "threads", 60.0)

# RUN: %pytest %s
"""trace= writes the compiled module's and the training step's timelines
(tp-run --trace's Chrome trace) after each call: one process per rank,
each call a step holding its kernels and GEMMs, and the collectives."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

import tp

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e",
                     "Inputs", "check_trace.py")


def check(path, ranks, steps):
    out = subprocess.run([sys.executable, CHECK, path, str(ranks), str(steps)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    return json.load(open(path))["traceEvents"]


def test_forward_and_step_traces(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 8))
    x = torch.randn(4, 16)
    forward = str(tmp_path / "forward.json")
    compiled = tp.parallelize_module(
        model, tp.DeviceMesh({"tp": 2}),
        {"0": tp.ColwiseParallel(), "2": tp.RowwiseParallel()},
        example_inputs=(x,), trace=forward)
    plain = tp.parallelize_module(
        model, tp.DeviceMesh({"tp": 2}),
        {"0": tp.ColwiseParallel(), "2": tp.RowwiseParallel()},
        example_inputs=(x,))
    with torch.no_grad():
        for _ in range(2):
            assert torch.equal(compiled(x), plain(x))  # tracing changes nothing
    events = check(forward, 2, 2)
    assert any(e.get("cat") == "collective" for e in events)

    steps = str(tmp_path / "steps.json")
    step = tp.train_step(compiled, loss="mse", optimizer=tp.SGD(lr=0.1),
                         trace=steps)
    for _ in range(3):
        step(x, torch.randn(4, 8))
    events = check(steps, 2, 3)
    assert any(e.get("cat") == "gemm" for e in events)

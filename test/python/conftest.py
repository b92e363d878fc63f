"""Shared pieces of the Python package's tests (test/python)."""
import os

import numpy as np
import pytest
import torch

import tp

MODELS = os.path.join(os.path.dirname(__file__), "..", "models")
INPUTS = os.path.join(os.path.dirname(__file__), "Inputs")
E2E_INPUTS = os.path.join(os.path.dirname(__file__), "..", "e2e", "Inputs")
TOOLS = tp.compiler._config.TOOLS_DIR


def relative_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def issue_example():
    """The issue's example: Linear, ReLU, Linear with a plan per module."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 8))
    plan = {"0": tp.ColwiseParallel(), "1": tp.NoParallel(),
            "2": tp.RowwiseParallel()}
    return model, plan


@pytest.fixture
def example():
    return issue_example()

"""tp from Python, in PyTorch's words (docs/Python.md).

    import tp
    mesh = tp.DeviceMesh({"tp": 2})
    plan = {"0": tp.ColwiseParallel(), "1": tp.NoParallel(), "2": tp.RowwiseParallel()}
    tp_model = tp.parallelize_module(model, mesh, plan, example_inputs=(x,))
    y = tp_model(x)

`model` is a torch.nn.Module (exported with torch.onnx.export, planned by
the names model.named_modules() prints) or the path of an ONNX file. The
compiled module runs on in-process ranks (threads), or one rank per process
under `mpirun -np N python3 script.py`.
"""
from ._tprt import Error
from .dropout import dropout_mask
from .mesh import DeviceMesh, init_device_mesh
from .module import CompiledModule, parallelize_module
from .styles import (ColwiseParallel, NoParallel, ParallelStyle,
                     RowwiseParallel, SequenceParallel)
from .training import SGD, AdamW, TrainStep, train_step

__all__ = [
    "AdamW", "ColwiseParallel", "CompiledModule", "DeviceMesh", "Error",
    "NoParallel", "ParallelStyle", "RowwiseParallel", "SGD",
    "SequenceParallel", "TrainStep", "dropout_mask", "init_device_mesh",
    "parallelize_module", "train_step",
]

"""A training script as users write it: runs unchanged on in-process ranks
(python3 train_loop.py) and with a process per rank (mpirun -np 2 python3
train_loop.py). Prints each step's loss, then the output's checksum."""
import sys

import torch

import tp

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 8))
mesh = tp.DeviceMesh({"tp": 2})
plan = {"0": tp.ColwiseParallel(), "1": tp.NoParallel(),
        "2": tp.RowwiseParallel()}
tp_model = tp.parallelize_module(model, mesh, plan,
                                 workdir=sys.argv[1] if len(sys.argv) > 1 else None)
step = tp.train_step(tp_model, loss="mse",
                     optimizer=tp.AdamW(lr=1e-2, weight_decay=0.0))
g = torch.Generator().manual_seed(1)
for i in range(10):
    x = torch.randn(4, 16, generator=g)
    loss = step(x, torch.tanh(x[:, :8]))
    print("step %d: loss %.8g" % (i + 1, loss), flush=True)
y = tp_model(torch.ones(4, 16))
print("output sum %.6g" % float(y.sum()), flush=True)
grads = step.get_gradients()
print("gradients: %s" % ", ".join(sorted(grads)), flush=True)

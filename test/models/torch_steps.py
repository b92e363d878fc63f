"""PyTorch's own SGD loop, written as `tp-run --steps` prints its losses:
the reference the fresh-model generators (gen_fresh_*.py,
gen_dropout_mlp.py) save as torch_steps.txt."""
import torch


def write_torch_steps(path, model, loss_of, lr, steps=3):
    """Runs `steps` SGD steps (lr, no momentum) of loss_of(model, step) on
    `model` and writes "step k: loss v" lines to `path`."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    with open(path, "w") as f:
        for step in range(steps):
            opt.zero_grad()
            loss = loss_of(model, step)
            loss.backward()
            opt.step()
            f.write("step %d: loss %.8g\n" % (step + 1, loss.item()))

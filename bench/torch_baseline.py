#!/usr/bin/python3
"""PyTorch eager baselines for bench/run.py, on the same model and cores.

usage: torch_baseline.py <single|checkpoint|autocast|megatron> layers hidden heads ffn batch seq repeat threads
Prints one JSON object: best forward and train-step seconds (train step:
forward, mean(y^2), backward, plain SGD update, like tp's --train), the
process's peak resident memory after the forwards and after the training
steps (MiB; per process for megatron), and the forward output's max
difference from the single-process model (megatron).

checkpoint: the training step with torch.utils.checkpoint around each layer
(the baseline for tp-compile --recompute 'layers.*').

autocast: forward and training step under torch.autocast("cpu",
dtype=torch.bfloat16), fp32 weights and updates (the baseline for
tp-compile --precision bf16).

megatron: 2 processes on gloo, each with `threads` threads, running
Megatron's tensor-parallel layers written by hand (bench/transformer.py's
torch_model with tp_size 2): PyTorch 1.13 has no DTensor.
"""
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformer  # noqa: E402


def peak_mib():
    """This process's peak resident MiB since its exec (VmHWM; ru_maxrss
    would include the bench's own peak, which it left at exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def checkpointed(model):
    """The nn.Sequential's layers each under torch.utils.checkpoint."""
    from torch.utils.checkpoint import checkpoint

    def run(x):
        for layer in model:
            x = checkpoint(layer, x, use_reentrant=False)
        return x
    return run


def measure(model, x, repeat, checkpoint=False, autocast=False):
    """Best forward and train-step seconds, and the peak resident MiB after
    the forwards and after the training steps. With autocast, each forward
    runs in its own torch.autocast region, as a training loop writes it
    (the region's cast of a weight is reused until it ends)."""
    def cast():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast)
    with torch.no_grad():
        with cast():
            model(x)  # warm-up
        fwd = []
        for _ in range(repeat):
            t = time.perf_counter()
            with cast():
                y = model(x).float()
            fwd.append(time.perf_counter() - t)
    fwd_peak = peak_mib()
    params = list(model.parameters())
    step = checkpointed(model) if checkpoint else model
    train = []
    for _ in range(repeat):
        t = time.perf_counter()
        with cast():
            out = step(x).float()
        loss = (out * out).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g
        train.append(time.perf_counter() - t)
    return {"forward_s": min(fwd), "train_s": min(train), "forward_peak_mib": fwd_peak,
            "train_peak_mib": peak_mib()}, y


def main():
    mode = sys.argv[1]
    layers, hidden, heads, ffn, batch, seq, repeat, threads = map(int, sys.argv[2:10])
    torch.set_num_threads(threads)
    w = transformer.weights(layers, hidden, ffn)
    x = torch.from_numpy(np.random.default_rng(1).standard_normal(
        (batch, seq, hidden)).astype(np.float32))
    if mode in ("single", "checkpoint", "autocast"):
        result, _ = measure(transformer.torch_model(w, layers, hidden, heads, ffn), x, repeat,
                            checkpoint=mode == "checkpoint", autocast=mode == "autocast")
        print(json.dumps(result))
        return
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def worker(rank, queue):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
        dist.init_process_group("gloo", rank=rank, world_size=2)
        torch.set_num_threads(threads)
        model = transformer.torch_model(w, layers, hidden, heads, ffn, rank, 2,
                                        dist.group.WORLD)
        result, y = measure(model, x, repeat)
        queue.put((rank, result, y.numpy()))
        dist.barrier()
        dist.destroy_process_group()

    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, queue)) for r in range(2)]
    for p in procs:
        p.start()
    results = dict((rank, (result, y)) for rank, result, y in (queue.get(), queue.get()))
    for p in procs:
        p.join()
    result, y = results[0]
    with torch.no_grad():
        ref = transformer.torch_model(w, layers, hidden, heads, ffn)(x).numpy()
    # Memory: the two processes together (tp's threads hold both ranks in one).
    for key in ("forward_peak_mib", "train_peak_mib"):
        result[key] = results[0][0][key] + results[1][0][key]
    result["max_abs_diff_vs_single"] = float(np.abs(y - ref).max())
    print(json.dumps(result))


if __name__ == "__main__":
    main()

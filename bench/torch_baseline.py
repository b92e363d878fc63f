#!/usr/bin/python3
"""PyTorch eager baselines for bench/run.py, on the same model and cores.

usage: torch_baseline.py <single|megatron> layers hidden heads ffn batch seq repeat threads
Prints one JSON object: best forward and train-step seconds (train step:
forward, mean(y^2), backward, plain SGD update, like tp's --train), and the
forward output's max difference from the single-process model (megatron).

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


def measure(model, x, repeat):
    with torch.no_grad():
        model(x)  # warm-up
        fwd = []
        for _ in range(repeat):
            t = time.perf_counter()
            y = model(x)
            fwd.append(time.perf_counter() - t)
    params = list(model.parameters())
    train = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = model(x)
        loss = (out * out).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g
        train.append(time.perf_counter() - t)
    return min(fwd), min(train), y


def main():
    mode = sys.argv[1]
    layers, hidden, heads, ffn, batch, seq, repeat, threads = map(int, sys.argv[2:10])
    torch.set_num_threads(threads)
    w = transformer.weights(layers, hidden, ffn)
    x = torch.from_numpy(np.random.default_rng(1).standard_normal(
        (batch, seq, hidden)).astype(np.float32))
    if mode == "single":
        fwd, train, _ = measure(transformer.torch_model(w, layers, hidden, heads, ffn), x, repeat)
        print(json.dumps({"forward_s": fwd, "train_s": train}))
        return
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def worker(rank, queue):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
        dist.init_process_group("gloo", rank=rank, world_size=2)
        torch.set_num_threads(threads)
        model = transformer.torch_model(w, layers, hidden, heads, ffn, rank, 2,
                                        dist.group.WORLD)
        fwd, train, y = measure(model, x, repeat)
        if rank == 0:
            queue.put((fwd, train, y.numpy()))
        dist.barrier()
        dist.destroy_process_group()

    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, queue)) for r in range(2)]
    for p in procs:
        p.start()
    fwd, train, y = queue.get()
    for p in procs:
        p.join()
    with torch.no_grad():
        ref = transformer.torch_model(w, layers, hidden, heads, ffn)(x).numpy()
    print(json.dumps({"forward_s": fwd, "train_s": train,
                      "max_abs_diff_vs_single": float(np.abs(y - ref).max())}))


if __name__ == "__main__":
    main()

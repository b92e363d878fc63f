#!/usr/bin/python3
"""ResNet-18 forward and training step: tp beside PyTorch eager, same cores.

usage: bench/cnn.py --tp-bin build/bin [--workdir build/bench-cnn]
                    [--batch 16] [--image 64] [--repeat 3] [--markdown docs/Performance.md]

torchvision's resnet18 (10 classes, random weights) at batch x 3 x image x
image. Forward: exported in eval mode (BatchNorm folded into the convs by
the exporter), tp on 1 rank against PyTorch eager under no_grad. Training
step (cross entropy, backward, plain SGD update; BatchNorm with batch
statistics): exported with training=TrainingMode.TRAINING, tp on 1 rank
against PyTorch in one process, and DDP on 2 ranks (tp: --mesh dp=2, each
rank its own BatchNorm statistics) against PyTorch's
DistributedDataParallel on 2 gloo processes. Times are the best of
--repeat steps after a warm-up; peak memory is the process's VmHWM. With
--markdown, the section between the `cnn` markers of that file is
replaced (bench/run.sh writes the rest).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import cpu_model, run_measured, write_section  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tp-bin", required=True)
    p.add_argument("--workdir", default="build/bench-cnn")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--image", type=int, default=64)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--markdown")
    return p.parse_args()


def log(msg):
    print(f"bench-cnn: {msg}", file=sys.stderr, flush=True)


def resnet18():
    import torch
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet18(num_classes=10)


# --- PyTorch baselines (run as subprocesses of this script) ------------------

def torch_single(batch, image, repeat, threads):
    import torch
    torch.set_num_threads(threads)
    model = resnet18()
    x = torch.randn(batch, 3, image, image)
    labels = torch.randint(0, 10, (batch,))
    model.eval()
    fwd = []
    with torch.no_grad():
        model(x)
        for _ in range(repeat):
            t = time.perf_counter()
            model(x)
            fwd.append(time.perf_counter() - t)
    model.train()
    return {"forward_s": min(fwd), "train_s": best_train_step(model, x, labels, repeat)}


def best_train_step(model, x, labels, repeat, before_step=lambda: None):
    """Seconds of the best of `repeat` SGD steps (lr 0.1) after a warm-up;
    `before_step` runs untimed before each (DDP's barrier)."""
    import torch
    import torch.nn.functional as F
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    times = []
    for k in range(repeat + 1):
        before_step()
        t = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), labels).backward()
        opt.step()
        if k:
            times.append(time.perf_counter() - t)
    return min(times)


def torch_ddp_rank(rank, world, batch, image, repeat, port, out):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    model = torch.nn.parallel.DistributedDataParallel(resnet18())
    x = torch.randn(batch // world, 3, image, image)
    labels = torch.randint(0, 10, (batch // world,))
    train_s = best_train_step(model, x, labels, repeat, before_step=dist.barrier)
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"train_s": train_s}, f)
    dist.destroy_process_group()


# --- the benchmark -----------------------------------------------------------

def export(workdir, batch, image):
    import torch
    fwd = os.path.join(workdir, f"resnet18_b{batch}_i{image}.onnx")
    train = os.path.join(workdir, f"resnet18_b{batch}_i{image}_train.onnx")
    x = torch.randn(batch, 3, image, image, generator=torch.Generator().manual_seed(1))
    np.save(os.path.join(workdir, "x.npy"), x.numpy())
    np.save(os.path.join(workdir, "labels.npy"),
            torch.randint(0, 10, (batch,), generator=torch.Generator().manual_seed(2)).numpy())
    if not os.path.exists(fwd):
        model = resnet18().eval()
        torch.onnx.export(model, (x,), fwd, opset_version=13, input_names=["x"],
                          output_names=["output"])
        model.train()
        torch.onnx.export(model, (x,), train, opset_version=13, input_names=["x"],
                          output_names=["output"], training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
    return fwd, train


def best_ms(text):
    for line in text.splitlines():
        if "best" in line and " ms" in line:
            return float(line.split("best", 1)[1].split("ms")[0])
    sys.exit(f"bench-cnn: no 'best ... ms' in tp-run's output:\n{text}")


def main():
    args = parse_args()
    cores = os.cpu_count() or 1
    os.makedirs(args.workdir, exist_ok=True)
    fwd_model, train_model = export(args.workdir, args.batch, args.image)
    x = os.path.join(args.workdir, "x.npy")
    labels = os.path.join(args.workdir, "labels.npy")
    tp_compile = os.path.join(args.tp_bin, "tp-compile")
    tp_run = os.path.join(args.tp_bin, "tp-run")

    rows = {}
    for name, model, flags, feed in (
            ("forward, 1 rank", fwd_model, [], ["--input", f"x={x}"]),
            ("training step, 1 rank", train_model, ["--train", "--loss", "cross_entropy"],
             ["--input", f"x={x}", "--labels", labels]),
            ("training step, DDP 2 ranks", train_model,
             ["--train", "--loss", "cross_entropy", "--mesh", "dp=2", "--data-parallel", "dp"],
             ["--input", f"x={x}", "--labels", labels])):
        out = os.path.join(args.workdir, name.replace(" ", "_").replace(",", "")) + "/"
        log(f"compiling {name}")
        _, compile_s, _ = run_measured([tp_compile, model, *flags, "-o", out])
        log(f"running {name}")
        text, _, peak = run_measured([tp_run, out, *feed, "--repeat", str(args.repeat),
                                      "--profile"])
        rows[name] = {"tp_s": best_ms(text) / 1e3, "tp_peak_mib": peak, "compile_s": compile_s}

    log("PyTorch eager, 1 process")
    text, _, peak = run_measured([sys.executable, __file__, "--torch-single", str(args.batch),
                                  str(args.image), str(args.repeat), str(cores)])
    single = json.loads(text)
    rows["forward, 1 rank"].update(base_s=single["forward_s"], base="PyTorch eager")
    rows["training step, 1 rank"].update(base_s=single["train_s"], base="PyTorch eager",
                                         base_peak_mib=peak)
    log("PyTorch DistributedDataParallel, 2 gloo processes")
    result = os.path.join(args.workdir, "ddp.json")
    run_measured([sys.executable, __file__, "--torch-ddp", str(args.batch), str(args.image),
                  str(args.repeat), result])
    with open(result) as f:
        rows["training step, DDP 2 ranks"].update(base_s=json.load(f)["train_s"],
                                                  base="PyTorch DDP, 2 gloo processes")

    cpu = cpu_model()
    lines = ["### ResNet-18 against PyTorch eager (`bench/cnn.py`)", "",
             f"Command: `/usr/bin/python3 bench/cnn.py --tp-bin build/bin --batch {args.batch} "
             f"--image {args.image} --repeat {args.repeat} --markdown docs/Performance.md`. "
             f"Machine: {cpu}, {cores} cores.", "",
             f"torchvision's resnet18, batch {args.batch} x 3 x {args.image} x {args.image}; "
             f"best of {args.repeat} steps. Training step: cross entropy, "
             "backward, SGD update, BatchNorm with batch statistics (DDP: each rank its own).", "",
             "| step | tp | baseline | baseline time | tp / baseline | tp-compile |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['tp_s'] * 1e3:.0f} ms | {r['base']} | "
                     f"{r['base_s'] * 1e3:.0f} ms | {r['tp_s'] / r['base_s']:.2f} | "
                     f"{r['compile_s']:.1f} s |")
    t = rows["training step, 1 rank"]
    lines += ["", f"Peak resident memory of the 1-rank training step (whole process): tp "
              f"{t['tp_peak_mib']:.0f} MiB, PyTorch {t['base_peak_mib']:.0f} MiB "
              f"(forward, eval and {args.repeat + 1} training steps), ratio "
              f"{t['tp_peak_mib'] / t['base_peak_mib']:.2f}."]
    print("\n".join(lines))
    if args.markdown:
        write_section(args.markdown, "cnn", lines)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--torch-single":
        b, i, r, t = map(int, sys.argv[2:6])
        print(json.dumps(torch_single(b, i, r, t)))
    elif len(sys.argv) > 1 and sys.argv[1] == "--torch-ddp":
        import multiprocessing as mp
        b, i, r = map(int, sys.argv[2:5])
        port = 29500 + os.getpid() % 1000
        procs = [mp.Process(target=torch_ddp_rank, args=(k, 2, b, i, r, port, sys.argv[5]))
                 for k in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        if any(p.exitcode for p in procs):
            sys.exit("bench-cnn: a DDP rank failed")
    else:
        main()

#!/usr/bin/python3
"""What calling a compiled module from Python costs over tp-run.

The bench model's forward (bench/transformer.py, Megatron's plan on tp=2)
compiled once through the Python package (tp.parallelize_module on the
ONNX file), then, on the same program folder:
  tp-run      its best step (--repeat R --profile: the program alone, the
              inputs already scattered)
  Python      the best call of compiled(x): scattering x out of the numpy
              buffer to every rank, the step, gathering the output into a
              new array, and the Python around it
Prints both, their ratio, and the mean time per call outside the program
(scatter, gather, thread start, Python): on 2 cores the step itself varies
more from call to call than that. No timing here is a test.

usage: PYTHONPATH=build/python bench/python_call.py --tp-bin build/bin
       [--layers 8 --hidden 1024 --heads 16 --ffn 4096 --batch 4 --seq 512
        --repeat 3]
"""
import argparse
import os
import platform
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import transformer  # noqa: E402

import tp  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    transformer.add_model_arguments(p, repeat=5)
    args = p.parse_args()
    L, D, H, F, B, S = args.layers, args.hidden, args.heads, args.ffn, args.batch, args.seq
    os.makedirs(args.workdir, exist_ok=True)
    tag = f"l{L}_d{D}_h{H}_f{F}_b{B}_s{S}"
    model = os.path.abspath(transformer.model_path(args.workdir, tag))
    if not os.path.exists(model):
        transformer.write_onnx(model, transformer.weights(L, D, F), L, B, S, D, H,
                               args.workdir)
    x = np.random.default_rng(1).standard_normal((B, S, D)).astype(np.float32)
    x_path = os.path.join(args.workdir, f"x_{tag}.npy")
    np.save(x_path, x)
    plan = dict(e.split("=") for e in transformer.MEGATRON_PLAN.split(","))
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; model {tag}")
    for ranks in (1, 2):
        compiled = tp.parallelize_module(
            model, tp.DeviceMesh({"tp": ranks}), plan if ranks > 1 else {},
            workdir=os.path.join(args.workdir, "python"))
        calls, outside = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            compiled(x)
            calls.append(time.perf_counter() - start)
            outside.append(calls[-1] - compiled.program.last_step_seconds)
        program = compiled.program._session.program_dir
        text = subprocess.run(
            [os.path.join(args.tp_bin, "tp-run"), program, "--input", x_path,
             "--repeat", str(args.repeat), "--profile"],
            capture_output=True, text=True, check=True).stdout
        step = float(re.search(r"best ([0-9.]+) ms", text).group(1)) / 1e3
        print(f"tp={ranks}: tp-run best step {step * 1e3:.1f} ms, Python call "
              f"best {min(calls) * 1e3:.1f} ms: ratio {min(calls) / step:.3f}; "
              f"outside the program {np.mean(outside) * 1e3:.2f} ms per call "
              f"({np.mean(outside) / np.mean(calls) * 100:.2f}% of it)", flush=True)


if __name__ == "__main__":
    main()

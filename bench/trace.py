#!/usr/bin/python3
"""What tp-run --trace costs: the bench transformer's training step on 1
rank and on tp=2, each run with and without --trace in the same run.

usage: bench/trace.py --tp-bin build/bin [--workdir build/bench]
       [--layers 4 --hidden 256 --heads 4 --ffn 1024 --batch 8 --seq 128]
       [--repeat 5] [--markdown docs/Performance.md]

Per program: the best step time without and with the trace, their ratio,
the events recorded per step and the file's size. Runs alternate (off, on,
off, on) so that a drifting machine affects both alike. With --markdown,
the section between the `trace` markers of that file is replaced. No timing
here is a test.
"""
import argparse
import json
import os
import re
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import transformer  # noqa: E402
from run import best_step_ms, cpu_model, log, run, run_measured, write_section  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser()
    transformer.add_model_arguments(p, repeat=5)
    p.set_defaults(layers=4, hidden=256, heads=4, ffn=1024, batch=8, seq=128)
    p.add_argument("--markdown")
    return p.parse_args()


def main():
    args = parse_args()
    tp_compile = os.path.join(args.tp_bin, "tp-compile")
    tp_run = os.path.join(args.tp_bin, "tp-run")
    model, x_path, _ = transformer.prepare(args, log)
    L, D, H, F, B, S = args.layers, args.hidden, args.heads, args.ffn, args.batch, args.seq
    builds = [("1 rank", []),
              ("tp=2 (Megatron plan)", ["--mesh", "tp=2", "--plan-entry",
                                        transformer.MEGATRON_PLAN])]
    rows = []
    for label, options in builds:
        out = os.path.join(args.workdir, "trace_" + re.sub(r"[^a-z0-9]+", "_", label) + "/")
        log(f"compiling {label}")
        run([tp_compile, model, "--train", "--lr", "0.1", *options, "-o", out])
        trace = os.path.join(args.workdir, "trace.json")
        best = {False: 1e9, True: 1e9}
        for _ in range(2):
            for traced in (False, True):
                command = [tp_run, out, "--input", f"x={x_path}", "--repeat", str(args.repeat),
                           "--profile"] + (["--trace", trace] if traced else [])
                text, _, _ = run_measured(command)
                best[traced] = min(best[traced], best_step_ms(text))
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        per_step = sum(1 for e in events if e["ph"] in ("X", "C")) / args.repeat
        rows.append((label, best[False], best[True], per_step, os.path.getsize(trace)))

    lines = ["## Tracing", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores. Command: `bench/trace.py "
             f"--layers {L} --hidden {D} --heads {H} --ffn {F} --batch {B} --seq {S} "
             f"--repeat {args.repeat}` (the bench transformer's training step; in-process "
             "ranks; best step of each).", "",
             "| program | step (ms) | with --trace (ms) | ratio | events per step | "
             "trace file (KiB) |",
             "|---|---|---|---|---|---|"]
    for label, off, on, per_step, size in rows:
        lines.append(f"| {label} | {off:.1f} | {on:.1f} | {on / off:.3f} | {per_step:.0f} | "
                     f"{size / 1024:.0f} |")
    lines += ["", "The steps run alternately without and with the trace, twice each; the "
              "differences are within the run-to-run spread. Without --trace every loop "
              "nest's call still passes through two hooks that test a thread-local pointer."]
    print("\n".join(lines))
    if args.markdown:
        write_section(args.markdown, "trace", lines)


if __name__ == "__main__":
    main()

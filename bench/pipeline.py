#!/usr/bin/python3
"""Pipeline parallelism: the bench transformer's training step on 2 stages
beside 1 rank and tensor parallelism on 2 ranks, in the same run.

usage: bench/pipeline.py --tp-bin build/bin [--workdir build/bench]
       [--layers 4 --hidden 256 --heads 4 --ffn 1024 --batch 8 --seq 128]
       [--microbatches 4,8] [--repeat 3] [--markdown docs/Performance.md]

Every program runs on in-process ranks (threads); 2 ranks get half the
cores' OpenBLAS threads each, 1 rank all of them (and, as a second row,
one: what a stage has). Per pipeline build: the best step time, the peak
resident memory of tp-run (all ranks), and the bubble: per stage, the time
it waited in its receives as a share of its step (tp-run --profile), beside
the schedule's (p-1)/(m+p-1). Each stage holds its own stage's work only,
so with p stages the best a step can be is the 1-rank step / p plus the
bubble. With --markdown, the section between the `pipeline` markers of
that file is replaced. No timing here is a test.
"""
import argparse
import os
import re
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import transformer  # noqa: E402
from run import best_step_ms, cpu_model, log, run, run_measured, write_section  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser()
    transformer.add_model_arguments(p, repeat=3)
    p.set_defaults(layers=4, hidden=256, heads=4, ffn=1024, batch=8, seq=128)
    p.add_argument("--microbatches", default="4,8")
    p.add_argument("--markdown")
    return p.parse_args()


def stage_waits(text):
    """(stage, share of its steps waited in recvs in %, predicted bubble %)."""
    return [(int(s), float(w), float(b)) for s, w, b in re.findall(
        r"stage (\d+) \(rank \d+\): .*?waited [0-9.]+ ms in recvs, ([0-9.]+)% of its steps "
        r"\(.*?= ([0-9.]+)%\)", text)]


def main():
    args = parse_args()
    tp_compile = os.path.join(args.tp_bin, "tp-compile")
    tp_run = os.path.join(args.tp_bin, "tp-run")
    model, x_path, _ = transformer.prepare(args, log)
    L, D, H, F, B, S = args.layers, args.hidden, args.heads, args.ffn, args.batch, args.seq

    cores = os.cpu_count() or 1
    # (label, tp-compile options, OpenBLAS threads per rank): 1 rank with
    # every core, and with one (what each of 2 ranks has).
    builds = [("1 rank", [], cores), ("1 rank, 1 OpenBLAS thread", [], 1),
              ("tp=2 (Megatron plan)", ["--mesh", "tp=2", "--plan-entry",
                                        transformer.MEGATRON_PLAN], max(1, cores // 2))]
    for m in [int(v) for v in args.microbatches.split(",") if v]:
        for schedule in ("gpipe", "1f1b"):
            builds.append((f"pp=2, {m} microbatches, {schedule}",
                           ["--mesh", "pp=2", "--pipeline",
                            f"axis=pp,microbatches={m},schedule={schedule}"],
                           max(1, cores // 2)))
    rows = []
    for label, options, blas_threads in builds:
        out = os.path.join(args.workdir, "pipeline_" + re.sub(r"[^a-z0-9]+", "_", label) + "/")
        log(f"compiling {label}")
        run([tp_compile, model, "--train", "--lr", "0.1", *options, "-o", out])
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
        log(f"running {label}")
        text, _, peak = run_measured([tp_run, out, "--input", f"x={x_path}",
                                      "--repeat", str(args.repeat), "--profile"], env)
        rows.append((label, best_step_ms(text), peak, stage_waits(text)))

    one = rows[0][1]
    lines = ["## Pipeline parallelism", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores. Command: `bench/pipeline.py "
             f"--layers {L} --hidden {D} --heads {H} --ffn {F} --batch {B} --seq {S} "
             f"--microbatches {args.microbatches} --repeat {args.repeat}` (the bench "
             "transformer's training step, mse loss, SGD; in-process ranks).", "",
             "| program | step (ms) | vs 1 rank | peak RSS (MiB) | waited in recvs per stage "
             "(measured bubble) | predicted bubble (p-1)/(m+p-1) |",
             "|---|---|---|---|---|---|"]
    for label, ms, peak, waits in rows:
        measured = ", ".join(f"stage {s}: {w:.1f}%" for s, w, _ in waits) or "-"
        predicted = f"{waits[0][2]:.1f}%" if waits else "-"
        lines.append(f"| {label} | {ms:.1f} | {ms / one:.2f} | {peak:.0f} | {measured} | "
                     f"{predicted} |")
    lines += ["", "A stage's wait includes the bubble and any imbalance between the stages "
              "(the first stage also waits while the last computes the loss); on 2 cores the "
              "ranks also share the memory bandwidth."]
    print("\n".join(lines))
    if args.markdown:
        write_section(args.markdown, "pipeline", lines)


if __name__ == "__main__":
    main()

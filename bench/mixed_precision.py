#!/usr/bin/python3
"""bf16 mixed precision: tp --precision bf16 beside tp's fp32 and PyTorch's
torch.autocast, same model, same cores, same run.

usage: bench/mixed_precision.py --tp-bin build/bin [--workdir build/bench]
           [--layers 4 --hidden 512 --heads 8 --ffn 2048 --batch 4 --seq 256]
           [--repeat 5] [--rounds 2] [--markdown docs/Performance.md]

The bench model (bench/transformer.py: pre-LN blocks; defaults: the issue's
4 layers, hidden 512, batch 4 x 256) on 1 rank. Per round, in this order:
tp fp32, tp bf16, PyTorch fp32, PyTorch autocast (each forward in its own
torch.autocast("cpu", dtype=torch.bfloat16) region, fp32 weights and
updates); times are the best of --repeat steps after a warm-up, peak memory
the process's. Ratios are taken within a round, and each is printed as the
range over the rounds (a shared machine's speed drifts between runs). The
activation bytes are tp-compile --report's (what the training step keeps
for its backward pass). With --markdown, the section between the
`mixed-precision` markers of that file is replaced.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as bench  # noqa: E402
import transformer  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    transformer.add_model_arguments(p, repeat=5)
    p.set_defaults(layers=4, hidden=512, heads=8, ffn=2048, batch=4, seq=256)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--markdown")
    return p.parse_args()


def main():
    args = parse_args()
    model, x_path, tag = transformer.prepare(args, bench.log)
    cores = os.cpu_count() or 1
    programs, reports = {}, {}
    for kind in ("forward", "train"):
        for precision in ("f32", "bf16"):
            out = os.path.join(args.workdir, f"{kind}_{precision}_{tag}")
            cmd = [os.path.join(args.tp_bin, "tp-compile"), model, "--mesh", "tp=1",
                   "--precision", precision, "--report=json", "-o", out + "/"]
            if kind == "train":
                cmd += ["--train", "--lr", "0.1"]
            bench.log(f"compiling {kind} {precision}")
            reports[(kind, precision)] = json.loads(bench.run(cmd))[0]
            programs[(kind, precision)] = out
    torch_cfg = [str(v) for v in (args.layers, args.hidden, args.heads, args.ffn, args.batch,
                                  args.seq, args.repeat, cores)]
    rounds, temporaries = [], {}
    for r in range(args.rounds):
        m = {}
        for kind in ("forward", "train"):
            for precision in ("f32", "bf16"):
                bench.log(f"round {r + 1}: tp {kind} {precision}")
                text, _, peak = bench.run_measured(
                    [os.path.join(args.tp_bin, "tp-run"), programs[(kind, precision)],
                     "--input", f"x={x_path}", "--repeat", str(args.repeat), "--profile"])
                m[("tp", kind, precision)] = (bench.best_step_ms(text) / 1e3, peak)
                temporaries[(kind, precision)] = int(
                    re.search(r"temporaries (\d+) bytes at their peak", text).group(1))
        for mode, precision in (("single", "f32"), ("autocast", "bf16")):
            bench.log(f"round {r + 1}: PyTorch {precision}")
            res = json.loads(bench.run([sys.executable, os.path.join(HERE, "torch_baseline.py"),
                                        mode, *torch_cfg]))
            for kind in ("forward", "train"):
                m[("torch", kind, precision)] = (res[kind + "_s"], res[kind + "_peak_mib"])
        rounds.append(m)

    def span(f):
        vals = sorted(f(m) for m in rounds)
        return f"{vals[0]:.2f}" if f"{vals[0]:.2f}" == f"{vals[-1]:.2f}" else \
            f"{vals[0]:.2f}-{vals[-1]:.2f}"

    lines = [f"## Mixed precision (bf16)", "",
             f"`bench/mixed_precision.py --layers {args.layers} --hidden {args.hidden} "
             f"--heads {args.heads} --ffn {args.ffn} --batch {args.batch} --seq {args.seq} "
             f"--repeat {args.repeat} --rounds {args.rounds}` on {bench.cpu_model()}, "
             f"{cores} cores; 1 rank. Seconds are the first round's; ratios are ranges "
             f"over {args.rounds} rounds, each taken within its round.", "",
             "| step | tp fp32 | tp bf16 | PyTorch fp32 | PyTorch autocast | tp bf16 / tp fp32 "
             "| tp bf16 / autocast | peak MiB tp fp32 / tp bf16 / autocast |",
             "|---|---|---|---|---|---|---|---|"]
    first = rounds[0]
    for kind in ("forward", "train"):
        t = lambda who, p, m=first: m[(who, kind, p)][0]
        lines.append(
            f"| {kind} | {t('tp', 'f32'):.3f} s | {t('tp', 'bf16'):.3f} s | "
            f"{t('torch', 'f32'):.3f} s | {t('torch', 'bf16'):.3f} s | "
            f"{span(lambda m: m[('tp', kind, 'bf16')][0] / m[('tp', kind, 'f32')][0])} | "
            f"{span(lambda m: m[('tp', kind, 'bf16')][0] / m[('torch', kind, 'bf16')][0])} | "
            f"{first[('tp', kind, 'f32')][1]:.0f} / {first[('tp', kind, 'bf16')][1]:.0f} / "
            f"{first[('torch', kind, 'bf16')][1]:.0f} (bf16 / fp32 "
            f"{span(lambda m: m[('tp', kind, 'bf16')][1] / m[('tp', kind, 'f32')][1])}, "
            f"/ autocast "
            f"{span(lambda m: m[('tp', kind, 'bf16')][1] / m[('torch', kind, 'bf16')][1])}) |")
    act32 = reports[("train", "f32")]["kept_for_backward_bytes_per_device"]
    act16 = reports[("train", "bf16")]["kept_for_backward_bytes_per_device"]
    t32, t16 = temporaries[("train", "f32")], temporaries[("train", "bf16")]
    lines += ["", f"Activations the training step keeps for its backward pass (tp-compile --report): fp32 "
              f"{act32:,}, bf16 {act16:,} ({act16 / act32:.2f} of fp32); the step's temporaries at "
              f"their peak (tp-run --profile, measured by the allocator): fp32 {t32:,}, bf16 "
              f"{t16:,} ({t16 / t32:.2f}). The process's peak (the table) also holds the "
              "weights, gradients, the model file while it loads and the allocator's cached "
              "blocks."]
    print("\n".join(lines))
    if args.markdown:
        bench.write_section(args.markdown, "mixed-precision", lines)


if __name__ == "__main__":
    main()

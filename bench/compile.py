#!/usr/bin/python3
"""tp-compile time and peak memory against model depth, and where the time goes.

usage: bench/compile.py --tp-bin build/bin [--workdir build/bench-compile]
                        [--depths 1,8,32,96] [--train-depth-max 96]
                        [--repeat 3] [--markdown docs/Performance.md]

The bench transformer (bench/transformer.py) at hidden 256, ffn 1024, 4
heads, 64 tokens, 1 to 96 layers, compiled with the Megatron plan on tp=2:
the forward and the training step (SGD), each distinct layer compiled
once (tp-compile's default), and the training step with every layer
inline (--outline-layers=0). Wall time and peak
resident memory (VmHWM) of each tp-compile process; then, for the deepest
training step, both ways, the phases that took longest
(`tp-compile --mlir-timing --mlir-timing-display=list`). With --markdown,
the section between the `compile` markers of that file is replaced.
Nothing here is asserted by a test.
"""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import transformer  # noqa: E402
from run import cpu_model, run_measured, write_section  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tp-bin", required=True)
    p.add_argument("--workdir", default="build/bench-compile")
    p.add_argument("--depths", default="1,8,32,96")
    p.add_argument("--train-depth-max", type=int, default=96,
                   help="compile training steps only up to this depth")
    p.add_argument("--phases", type=int, default=8,
                   help="how many of the longest phases to list")
    p.add_argument("--repeat", type=int, default=3,
                   help="compile each this many times; the table gives the fastest "
                        "(a shared 2-core machine varies by 40%% from one run to the next)")
    p.add_argument("--markdown")
    return p.parse_args()


def log(msg):
    print(f"bench-compile: {msg}", file=sys.stderr, flush=True)


def phases(text, count):
    """The `count` longest entries of --mlir-timing-display=list (wall s)."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*[0-9.]+ \(\s*[0-9.]+%\)\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(.+)$", line)
        # Pipelines only wrap the passes listed on their own lines.
        if not m or m.group(2) in ("Total", "root") or m.group(2).endswith("Pipeline") \
                or m.group(2).startswith("Pipeline Collection"):
            continue
        name = "import (the ONNX file)" if m.group(2).startswith("import ") else m.group(2)
        rows.append((float(m.group(1)), name))
    return sorted(rows, reverse=True)[:count]


def main():
    args = parse_args()
    tp_compile = os.path.join(args.tp_bin, "tp-compile")
    os.makedirs(args.workdir, exist_ok=True)
    plan = transformer.MEGATRON_PLAN
    # tp-compile outlines repeated layers by default (--outline-layers=2);
    # the inline training step beside it.
    modes = [("forward", []), ("train step", ["--train"]),
             ("train step, inline (--outline-layers=0)", ["--train", "--outline-layers=0"])]
    depths = [int(d) for d in args.depths.split(",") if d]
    models, jobs = {}, []
    for depth in depths:
        models[depth] = os.path.join(args.workdir, f"depth{depth}.onnx")
        if not os.path.exists(models[depth]):
            transformer.write_onnx(models[depth], transformer.weights(depth, 256, 1024), depth,
                                   1, 64, 256, 4, args.workdir)
        jobs += [(depth, i) for i, (_, extra) in enumerate(modes)
                 if not (extra and depth > args.train_depth_max)]
    # In rounds, every compile once per round: a busy spell of a shared
    # machine then weighs on every depth alike, not on one depth's runs.
    runs = {job: [] for job in jobs}
    for r in range(args.repeat):
        for depth, i in jobs:
            name, extra = modes[i]
            log(f"round {r + 1} of {args.repeat}: depth {depth}: {name}")
            out = os.path.join(args.workdir, f"depth{depth}_{i}/")
            runs[(depth, i)].append(run_measured(
                [tp_compile, models[depth], "--mesh", "tp=2", "--plan-entry", plan, *extra,
                 "-o", out])[1:])
    rows, deepest = [], None
    for depth in depths:
        row = [depth]
        for i, (_, extra) in enumerate(modes):
            if (depth, i) not in runs:
                row.append(None)
                continue
            walls = [w for w, _ in runs[(depth, i)]]
            row.append((min(walls), max(r for _, r in runs[(depth, i)]),
                        statistics.median(walls)))
            if extra:
                deepest = (depth, models[depth])
        rows.append(row)

    breakdown = []
    if deepest:
        depth, model = deepest
        for name, extra in modes[1:]:
            log(f"timing the phases of depth {depth}: {name}")
            out = os.path.join(args.workdir, f"depth{depth}_timing/")
            # The report goes to stderr; run_measured returns stdout only.
            text, wall, _ = run_measured(
                ["sh", "-c", '"$@" 2>&1', "sh", tp_compile, model, "--mesh", "tp=2",
                 "--plan-entry", plan, *extra, "--mlir-timing", "--mlir-timing-display=list",
                 "-o", out])
            breakdown.append((name, wall, phases(text, args.phases)))

    lines = report(args, rows, modes, breakdown, deepest)
    print("\n".join(lines))
    if args.markdown:
        write_section(args.markdown, "compile", lines)


def report(args, rows, modes, breakdown, deepest):
    out = ["### tp-compile against depth (`bench/compile.py`)", "",
           f"Command: `/usr/bin/python3 bench/compile.py --tp-bin build/bin --depths {args.depths} "
           f"--train-depth-max {args.train_depth_max} --repeat {args.repeat} "
           "--markdown docs/Performance.md`. "
           f"Machine: {cpu_model()}, {os.cpu_count()} cores.", "",
           "The bench transformer at hidden 256, ffn 1024, 4 heads, 64 tokens; the Megatron "
           f"plan on tp=2. Wall seconds (the fastest of {args.repeat} compiles, run in "
           f"rounds of one compile each) and peak "
           "resident MiB of tp-compile.", "",
           "| layers | " + " | ".join(f"{n} s | peak MiB" for n, _ in modes) + " |",
           "|---|" + "---|---|" * len(modes)]
    for depth, *cells in rows:
        text = [f"{c[0]:.2f} | {c[1]:.0f}" if c else
                f"not run (over --train-depth-max {args.train_depth_max}) | -" for c in cells]
        out.append(f"| {depth} | {' | '.join(text)} |")
    by_depth = {depth: cells for depth, *cells in rows}
    if 8 in by_depth and deepest and by_depth[8][1] and by_depth[deepest[0]][1]:
        ratio = by_depth[deepest[0]][1][0] / by_depth[8][1][0]
        median_ratio = by_depth[deepest[0]][1][2] / by_depth[8][1][2]
        out += ["", f"Training step, {deepest[0]} layers against 8: {ratio:.1f}x the time "
                    f"(fastest of {args.repeat} compiles each, run in rounds); "
                    f"{median_ratio:.1f}x by the medians."]
    for name, wall, top in breakdown:
        out += ["", f"Longest phases of the {deepest[0]}-layer {name} ({wall:.1f} s with "
                    f"`--mlir-timing`; \"Rest\" is time outside passes and LLVM stages):", "",
                "| phase | s |", "|---|---|"]
        out += [f"| {phase} | {s:.2f} |" for s, phase in top]
    out += ["", "tp-compile's peak resident memory is mostly the ONNX file it reads. "
                "By default (`--outline-layers=2`) each distinct layer is compiled once, as "
                "one function called per layer; `--outline-layers=0` compiles every layer "
                "inline. The step needs the same memory and time either way "
                "(docs/Architecture.md has the figures)."]
    return out


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""tp's benchmarks, each beside its baseline in the same run; prints ratios.

  step time     the transformer stack (bench/transformer.py) forward and
                training step (mse loss, SGD) on 1 and 2 in-process ranks
                and 2 MPI ranks, against PyTorch eager on the same cores
                (1 process; Megatron's layers by hand on 2 gloo processes)
  communication bytes moved per device per forward / train step (tp's
                --report) against Megatron's analytic minimum
  compute       GEMM time inside the compiled 1-rank forward against
                OpenBLAS alone (numpy) on the same shapes; the rest of the
                step against the memory bandwidth (numpy copy)
  (tp-compile time against depth: bench/compile.py)

usage: bench/run.py --tp-bin build/bin [--layers 8 --hidden 1024 --heads 16
       --ffn 4096 --batch 4 --seq 512 --repeat 3]
       [--markdown docs/Performance.md]
No timing here is a test: these numbers are printed, never asserted.
"""
import argparse
import json
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


def parse_args():
    p = argparse.ArgumentParser()
    transformer.add_model_arguments(p, repeat=3)
    p.add_argument("--skip-mpi", action="store_true")
    p.add_argument("--markdown")
    return p.parse_args()


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


# Runs a command and writes its ru_maxrss (KiB) to the file descriptor
# given first. A process spawned straight from the bench starts with the
# bench's own high-water mark in its ru_maxrss (Linux keeps the peak of the
# address space a process leaves at exec, and a spawned child leaves the
# bench's), which after numpy's GEMMs exceeds a whole tp-run; this small
# launcher's is a few MiB.
_LAUNCHER = """import os, sys
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
os.write(int(sys.argv[1]), str(usage.ru_maxrss).encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(cmd, env=None):
    """stdout, wall seconds and peak resident MiB of one process (bench/cnn.py
    uses it too). The peak is the kernel's own account at exit (wait4's
    ru_maxrss, read by _LAUNCHER): polling /proc/<pid>/status while the
    process runs slowed a multi-threaded tp-run by up to 1.5x (each read
    takes the process's memory-map lock, which its threads' page faults
    wait for)."""
    start = time.perf_counter()
    peak_r, peak_w = os.pipe()
    p = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCHER, str(peak_w), *cmd],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         pass_fds=(peak_w,))
    os.close(peak_w)
    out, err = p.communicate()
    with os.fdopen(peak_r) as f:
        peak_kib = f.read()
    if p.returncode != 0 or not peak_kib:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{out}{err}")
    return out, time.perf_counter() - start, int(peak_kib) / 1024


def best_step_ms(text):
    m = re.search(r"best ([0-9.]+) ms", text)
    return float(m.group(1))


def gemms(text):
    """(m, n, k) -> (calls, ms) from tp-run --profile."""
    out = {}
    for m in re.finditer(r"gemm (\d+)x(\d+)x(\d+) \(m x n x k\)\s+(\d+) call\(s\)\s+([0-9.]+) ms", text):
        out[tuple(map(int, m.groups()[:3]))] = (int(m.group(4)), float(m.group(5)))
    return out


def numpy_gemm_seconds(m, n, k, repeat=3):
    a = np.random.rand(m, k).astype(np.float32)
    b = np.random.rand(k, n).astype(np.float32)
    a @ b
    best = 1e9
    for _ in range(repeat):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return best


def copy_bandwidth():
    """Bytes read + written per second by a 256 MiB numpy copy."""
    a = np.ones(64 << 20, np.float32)
    b = np.empty_like(a)
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best


def main():
    args = parse_args()
    tp_compile = os.path.join(args.tp_bin, "tp-compile")
    tp_run = os.path.join(args.tp_bin, "tp-run")
    cores = os.cpu_count() or 1
    os.makedirs(args.workdir, exist_ok=True)
    L, D, H, F, B, S = args.layers, args.hidden, args.heads, args.ffn, args.batch, args.seq
    tokens = B * S
    tag = f"l{L}_d{D}_h{H}_f{F}_b{B}_s{S}"
    model = transformer.model_path(args.workdir, tag)
    x_path = os.path.join(args.workdir, f"x_{tag}.npy")
    if not os.path.exists(model):
        log(f"writing {model}")
        w = transformer.weights(L, D, F)
        transformer.write_onnx(model, w, L, B, S, D, H, args.workdir)
        del w
    np.save(x_path, np.random.default_rng(1).standard_normal((B, S, D)).astype(np.float32))
    plan = transformer.MEGATRON_PLAN
    results = {"config": vars(args), "cores": cores, "machine": platform.processor() or platform.machine()}

    # --- tp: compile, report, run --------------------------------------
    programs = {}
    # "recompute": the training step with every layer checkpointed.
    for kind in ("forward", "train", "recompute"):
        for tp in (1, 2):
            out = os.path.join(args.workdir, f"{kind}_tp{tp}_{tag}")
            cmd = [tp_compile, model, "--mesh", f"tp={tp}", "--report=json", "-o", out + "/"]
            if tp > 1:
                cmd += ["--plan-entry", plan]
            if kind != "forward":
                cmd += ["--train", "--lr", "0.1"]
            if kind == "recompute":
                cmd += ["--recompute", "layers.*"]
            log(f"compiling {kind} tp={tp}")
            report = json.loads(run(cmd))[0]
            programs[(kind, tp)] = (out, report)
    step, peak_mib = {}, {}
    for kind in ("forward", "train", "recompute"):
        for label, tp, mpi in (("tp 1 rank", 1, False), ("tp 2 ranks (threads)", 2, False),
                               ("tp 2 ranks (MPI)", 2, True)):
            if mpi and (args.skip_mpi or kind == "recompute"):
                continue
            out, _ = programs[(kind, tp)]
            cmd = [tp_run, out, "--input", f"x={x_path}", "--repeat", str(args.repeat), "--profile"]
            env = None
            if mpi:
                env = dict(os.environ, OPENBLAS_NUM_THREADS=str(max(1, cores // 2)))
                cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                       "-x", "OPENBLAS_NUM_THREADS"] + cmd + ["--backend", "mpi"]
            log(f"running {kind}: {label}")
            # Peak resident memory of the tp-run process (all its ranks);
            # under mpirun that would be mpirun's, so not measured.
            text, _, peak = run_measured(cmd, env)
            step[(kind, label)] = best_step_ms(text) / 1e3
            if not mpi:
                peak_mib[(kind, label)] = peak
            if kind == "forward" and tp == 1:
                results["gemm_profile"] = gemms(text)
                results["forward_tp1_text"] = text

    # --- PyTorch -------------------------------------------------------------
    torch_cfg = [str(v) for v in (L, D, H, F, B, S, args.repeat)]
    log("PyTorch eager, 1 process")
    single = json.loads(run([sys.executable, os.path.join(HERE, "torch_baseline.py"), "single",
                             *torch_cfg, str(cores)]))
    log("PyTorch Megatron, 2 gloo processes")
    megatron = json.loads(run([sys.executable, os.path.join(HERE, "torch_baseline.py"), "megatron",
                               *torch_cfg, str(max(1, cores // 2))]))
    log("PyTorch eager, 1 process, torch.utils.checkpoint per layer")
    checkpoint = json.loads(run([sys.executable, os.path.join(HERE, "torch_baseline.py"),
                                 "checkpoint", *torch_cfg, str(cores)]))
    baseline = {"tp 1 rank": single, "tp 2 ranks (threads)": megatron, "tp 2 ranks (MPI)": megatron}
    rows = []
    for (kind, label), secs in step.items():
        base = baseline[label]
        base_name = "PyTorch 1 process" if label == "tp 1 rank" else "PyTorch Megatron 2 gloo"
        if kind == "recompute" and label == "tp 1 rank":
            base, base_name = checkpoint, "PyTorch 1 process, checkpoint per layer"
        field = "forward" if kind == "forward" else "train"
        tp_peak = peak_mib.get((kind, label))
        rows.append((kind, label, secs, base_name, base[field + "_s"], secs / base[field + "_s"],
                     tp_peak, base[field + "_peak_mib"]))
    # The checkpointed steps against plain eager too (what recomputation saves).
    for kind, label in (("recompute", "tp 1 rank"),):
        rows.append((kind, label, step[(kind, label)], "PyTorch 1 process (no checkpoint)",
                     single["train_s"], step[(kind, label)] / single["train_s"],
                     peak_mib[(kind, label)], single["train_peak_mib"]))

    # --- communication -------------------------------------------------------
    per_ar = tokens * D * 4 * 2 * (2 - 1) / 2  # ring all_reduce, 2 devices
    comm = []
    for kind, per_layer in (("forward", 2), ("train", 4)):
        _, report = programs[(kind, 2)]
        minimum = per_layer * L * per_ar
        comm.append((kind, report["total_collectives"], report["total_bytes_moved"], minimum,
                     report["total_bytes_moved"] / minimum))

    # --- compute efficiency --------------------------------------------------
    log("OpenBLAS alone on the same GEMM shapes")
    gemm_rows = []
    tp_gemm_s = base_gemm_s = 0.0
    for (m, n, k), (calls, ms) in sorted(results["gemm_profile"].items()):
        per_call_tp = ms / 1e3 / calls
        per_call_blas = numpy_gemm_seconds(m, n, k)
        reps = args.repeat
        tp_gemm_s += ms / 1e3 / reps
        base_gemm_s += per_call_blas * calls / reps
        gemm_rows.append((m, n, k, calls // reps, 2 * m * n * k / per_call_tp / 1e9,
                          2 * m * n * k / per_call_blas / 1e9, per_call_tp / per_call_blas))
    peak = 2 * 2048 ** 3 / numpy_gemm_seconds(2048, 2048, 2048) / 1e9
    fwd1 = step[("forward", "tp 1 rank")]
    rest_s = fwd1 - tp_gemm_s
    bandwidth = copy_bandwidth()
    act = programs[("forward", 1)][1]["activation_bytes_per_device"]
    rest_min_s = 2 * act / bandwidth

    lines = report_lines(args, cores, rows, comm, gemm_rows, tp_gemm_s, base_gemm_s, peak, fwd1,
                         rest_s, rest_min_s, bandwidth, act, megatron)
    print("\n".join(lines))
    if args.markdown:
        write_markdown(args, lines)


def report_lines(args, cores, rows, comm, gemm_rows, tp_gemm_s, base_gemm_s, peak, fwd1, rest_s,
                 rest_min_s, bandwidth, act, megatron):
    L, D, H, F, B, S = args.layers, args.hidden, args.heads, args.ffn, args.batch, args.seq
    out = [f"Model: {L} layers, hidden {D}, {H} heads, ffn {F}, batch {B} x seq {S} "
           f"({B * S} tokens); {cores} cores; best of {args.repeat} steps.", "",
           "### Step time and peak memory against PyTorch eager", "",
           "| step | tp | seconds | baseline | seconds | time tp / baseline "
           "| tp peak MiB | baseline peak MiB | memory tp / baseline |",
           "|---|---|---|---|---|---|---|---|---|"]
    for kind, label, secs, base_name, base, ratio, tp_peak, base_peak in rows:
        step_name = "train, recompute layers.*" if kind == "recompute" else kind
        mem = (f"{tp_peak:.0f} | {base_peak:.0f} | {tp_peak / base_peak:.2f}" if tp_peak
               else f"- | {base_peak:.0f} | -")
        out.append(f"| {step_name} | {label} | {secs:.3f} | {base_name} | {base:.3f} | "
                   f"{ratio:.2f} | {mem} |")
    out += ["", "Peak memory: the resident set's high-water mark of the tp-run process "
                "(weights, inputs and every rank's buffers) and of the PyTorch process after "
                "its forwards or training steps (the training step's includes the forward's). "
                "With 2 ranks, tp's threads share one process and the two gloo processes are "
                "added up (each holds its own copy of PyTorch's libraries); under mpirun "
                "tp's memory is not measured. \"train, recompute layers.*\" is "
                "`tp-compile --recompute 'layers.*'`: every layer checkpointed, its "
                "activations recomputed in the backward pass (PyTorch: "
                "torch.utils.checkpoint around each layer)."]
    out += ["", f"(The Megatron baseline's forward output differs from the 1-process "
                f"model's by {megatron['max_abs_diff_vs_single']:.2g} at most.)", "",
            "### Communication per device against Megatron's minimum (tp=2)", "",
            "| step | collectives | bytes moved (ring) | Megatron minimum | ratio |",
            "|---|---|---|---|---|"]
    for kind, n, moved, minimum, ratio in comm:
        out.append(f"| {kind} | {n} | {moved:,} | {int(minimum):,} | {ratio:.3f} |")
    out += ["", "Minimum: 2 all_reduces of [tokens, hidden] f32 per layer forward, 4 per "
                "layer in a training step; a ring all_reduce on 2 devices moves its size once.",
            "", "### GEMMs inside the compiled 1-rank forward against OpenBLAS alone", "",
            "| m x n x k | calls / step | tp GFLOP/s | OpenBLAS GFLOP/s | time ratio |",
            "|---|---|---|---|---|"]
    for m, n, k, calls, tp_gf, base_gf, ratio in gemm_rows:
        out.append(f"| {m}x{n}x{k} | {calls} | {tp_gf:.1f} | {base_gf:.1f} | {ratio:.2f} |")
    out += ["", f"GEMM time per forward: tp {tp_gemm_s:.3f} s, OpenBLAS alone {base_gemm_s:.3f} s "
                f"(ratio {tp_gemm_s / base_gemm_s:.2f}); OpenBLAS peak (2048^3 sgemm): {peak:.1f} GFLOP/s.",
            f"Everything else in the forward: {rest_s:.3f} s of {fwd1:.3f} s; writing and reading "
            f"its {act / 2**20:.0f} MiB of activations once at {bandwidth / 1e9:.1f} GB/s "
            f"(numpy copy) would take {rest_min_s:.3f} s: ratio {rest_s / rest_min_s:.1f}."]
    return out


def cpu_model():
    """The CPU's model name and its widest vector instructions (bench/cnn.py
    and the other benches quote it too): ratios against PyTorch differ
    between CPUs of one name with and without AVX-512."""
    name, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for l in f:
                if l.startswith("model name") and name == "unknown CPU":
                    name = l.split(":", 1)[1].strip()
                elif l.startswith("flags") and not flags:
                    flags = set(l.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [label for flag, label in (("avx512f", "AVX-512"), ("avx512_bf16", "AVX-512 BF16"),
                                     ("amx_tile", "AMX")) if flag in flags]
    if not isa and "avx2" in flags:
        isa = ["AVX2"]
    return f"{name} ({', '.join(isa)})" if isa else name


def write_markdown(args, lines):
    cpu = cpu_model()
    head = ["# Performance", "",
            "Produced by `./bench/run.sh` (bench/run.py: every figure beside its baseline from "
            "the same run; nothing here is asserted by a test).", "",
            f"Machine: {cpu}, {os.cpu_count()} cores, "
            f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; "
            f"PyTorch {__import__('torch').__version__} (Debian), OpenBLAS through numpy. "
            "A shared virtual machine's speed drifts between runs (up to 1.5x on the "
            "2-core build machine): compare ratios from one run, not seconds across runs.", "",
            "Command: `./bench/run.sh " + " ".join(
                f"--{k} {v}" for k, v in (("layers", args.layers), ("hidden", args.hidden),
                                          ("seq", args.seq), ("repeat", args.repeat))) + "`", ""]
    # The sections other scripts write (SECTIONS) are theirs: kept.
    kept = ""
    if os.path.exists(args.markdown):
        old = open(args.markdown).read()
        for name in SECTIONS:
            begin, end = section_markers(name)
            if begin in old and end in old:
                kept += "\n" + old[old.index(begin):old.index(end) + len(end)] + "\n"
    with open(args.markdown, "w") as f:
        f.write("\n".join(head + lines) + "\n" + kept)


# The sections of docs/Performance.md other scripts write.
SECTIONS = {"compile": "bench/compile.py", "cnn": "bench/cnn.py",
            "pipeline": "bench/pipeline.py", "trace": "bench/trace.py",
            "mixed-precision": "bench/mixed_precision.py"}


def section_markers(name):
    return f"<!-- BEGIN {name} ({SECTIONS[name]}) -->", f"<!-- END {name} -->"


def write_section(path, name, lines):
    """Replaces the text between the `name` markers of `path` (appends them)."""
    begin, end = section_markers(name)
    text = open(path).read() if os.path.exists(path) else ""
    block = "\n".join([begin, *lines, end])
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

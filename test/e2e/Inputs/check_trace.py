#!/usr/bin/python3
"""Checks a tp-run --trace file against the Chrome trace event format.

usage: check_trace.py <trace.json> <ranks> <steps> [<profile.txt>]

Checks: the file is JSON with a traceEvents list; every event has name, ph,
pid and tid; complete events (ph X) have ts and dur >= 0, counters (ph C)
ts and args; the pids are exactly the ranks 0..N-1, each named; on every
(pid, tid) the complete events nest (two either are disjoint or one holds
the other); each rank has `steps` step spans holding its kernels and GEMMs;
a collective site (not send / recv) is called as often, with the same bytes,
on every rank that calls it. With the output of the same run's --profile:
rank 0's calls, bytes and time per collective site, per GEMM shape and per
kernel family are the profile's (times within 10% or 20 us: two clocks read
around the same call), and the families add up to no more than a step.
Prints what it counted and exits 1 on any failure.
"""
import re
import collections
import json
import sys

path, ranks, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
problems = []
with open(path) as f:
    trace = json.load(f)
events = trace["traceEvents"]
for e in events:
    for key in ("name", "ph", "pid", "tid"):
        if key not in e:
            problems.append("event without %s: %r" % (key, e))
    if e.get("ph") == "X" and not ("ts" in e and e.get("dur", -1) >= 0):
        problems.append("complete event without ts or dur: %r" % e)
    if e.get("ph") == "C" and not ("ts" in e and "args" in e):
        problems.append("counter without ts or args: %r" % e)
pids = {e["pid"] for e in events}
if pids != set(range(ranks)):
    problems.append("pids %s, expected ranks 0..%d" % (sorted(pids), ranks - 1))
named = {e["pid"] for e in events if e["name"] == "process_name"}
if named != pids:
    problems.append("ranks without a process_name: %s" % sorted(pids - named))

# Nesting, per track. Timestamps have 1 ns resolution (3 decimals of us).
EPS = 0.002
tracks = collections.defaultdict(list)
for e in events:
    if e["ph"] == "X":
        tracks[(e["pid"], e["tid"])].append(e)
for key, spans in tracks.items():
    spans.sort(key=lambda e: (e["ts"], -e["dur"]))
    open_ends = []
    for e in spans:
        while open_ends and open_ends[-1] <= e["ts"] + EPS:
            open_ends.pop()
        end = e["ts"] + e["dur"]
        if open_ends and end > open_ends[-1] + EPS:
            problems.append("on pid %d tid %d, %s overlaps the span around it"
                            % (key[0], key[1], e["name"]))
            break
        open_ends.append(end)

counts = collections.Counter()
for r in range(ranks):
    mine = [e for e in events if e["pid"] == r and e["ph"] == "X"]
    step_spans = [e for e in mine if e.get("cat") == "step"]
    work = [e for e in mine if e.get("cat") in ("kernel", "gemm")]
    if len(step_spans) != steps:
        problems.append("rank %d has %d steps, expected %d"
                        % (r, len(step_spans), steps))
    outside = [e for e in work if not any(
        s["ts"] - EPS <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + EPS
        for s in step_spans)]
    if outside:
        problems.append("rank %d: %s outside every step" % (r, outside[0]["name"]))
    for e in mine:
        counts[e.get("cat")] += 1

calls = collections.defaultdict(list)  # site -> [(rank, bytes)]
for e in events:
    if e.get("cat") == "collective":
        calls[e["args"]["site"]].append((e["pid"], e["args"]["bytes"]))
for site, made in sorted(calls.items()):
    name = next(e["name"] for e in events
                if e.get("cat") == "collective" and e["args"]["site"] == site)
    if name.startswith(("send", "recv")):
        continue
    per_rank = collections.Counter(r for r, _ in made)
    if len(set(per_rank.values())) != 1:
        problems.append("%s: calls per rank differ: %s" % (name, dict(per_rank)))
    if len({b for _, b in made}) != 1:
        problems.append("%s: bytes differ between ranks" % name)
    if not all("waiting_for_peers_us" in e["args"] for e in events
               if e.get("cat") == "collective" and e["args"]["site"] == site):
        problems.append("%s: a call without its wait / move split" % name)

if len(sys.argv) > 4:
    text = open(sys.argv[4]).read()
    rank0 = [e for e in events if e["pid"] == 0 and e["ph"] == "X"]

    def close(a_ms, b_ms):
        return abs(a_ms - b_ms) <= max(0.1 * max(a_ms, b_ms), 0.02)
    compared = 0
    for m in re.finditer(r"^  (.+?)\s+(\d+) call\(s\)\s+(\d+) bytes/rank\s+([0-9.]+) ms",
                         text, re.M):
        name, n, total, ms = m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4))
        mine = [e for e in rank0 if e.get("cat") == "collective" and e["name"] == name]
        got = (len(mine), sum(e["args"]["bytes"] for e in mine),
               sum(e["dur"] for e in mine) / 1e3)
        if got[:2] != (n, total) or not close(got[2], ms):
            problems.append("%s: the profile says %d calls, %d bytes, %.3f ms; the "
                            "trace %d, %d, %.3f" % ((name, n, total, ms) + got))
        compared += 1
    for m in re.finditer(r"^  gemm (\d+)x(\d+)x(\d+) \(m x n x k\)\s+(\d+) call\(s\)\s+"
                         r"([0-9.]+) ms", text, re.M):
        shape = tuple(int(v) for v in m.group(1, 2, 3))
        n, ms = int(m.group(4)), float(m.group(5))
        mine = [e for e in rank0 if e.get("cat") == "gemm" and
                (e["args"]["m"], e["args"]["n"], e["args"]["k"]) == shape]
        got = (sum(e["args"]["count"] for e in mine), sum(e["dur"] for e in mine) / 1e3)
        if got[0] != n or not close(got[1], ms):
            problems.append("GEMM %s: the profile says %d calls, %.3f ms; the trace "
                            "%d, %.3f" % ((shape, n, ms) + got))
        compared += 1
    # Time by kernel family, per step: the trace's kernel events of the
    # family (and its collectives); together no more than the mean step
    # (kernel sites do not nest, so nothing is counted twice).
    step_count = sum(1 for e in rank0 if e.get("cat") == "step")
    mean = re.search(r"mean ([0-9.]+) ms per step", text)
    families = re.findall(r"^    (\w+)\s+([0-9.]+) ms\s+[0-9.]+%$", text, re.M)
    for family, ms in families:
        if family == "other":
            continue
        if family == "collectives":
            mine = [e for e in rank0 if e.get("cat") == "collective"]
        else:
            mine = [e for e in rank0 if e.get("cat") == "kernel" and
                    e["args"].get("family") == family]
        got = sum(e["dur"] for e in mine) / 1e3 / step_count
        if not close(got, float(ms)):
            problems.append("family %s: the profile says %s ms per step; the trace %.3f"
                            % (family, ms, got))
        compared += 1
    accounted = sum(float(ms) for f, ms in families if f != "other")
    if not families or not mean or accounted > 1.01 * float(mean.group(1)) + 0.02:
        problems.append("kernel families: %.3f ms of a %s ms step" %
                        (accounted, mean.group(1) if mean else "?"))
    print("profile lines compared with the trace: %d" % compared)

phases = collections.Counter(e["name"] for e in events if e.get("cat") == "phase")
if set(phases) - {"forward", "loss", "backward", "recompute", "update"}:
    problems.append("unknown phases: %s" % sorted(phases))
print("phase spans: %s; microbatch spans: %d" % (
    ", ".join("%s %d" % (p, phases[p]) for p in ("forward", "loss", "backward", "recompute", "update")
              if phases[p]) or "none",
    counts["microbatch"]))
print("%d ranks, %d steps each: %d kernel, %d GEMM, %d collective events"
      % (ranks, steps, counts["kernel"], counts["gemm"], counts["collective"]))
print("dropped events: %d" % trace["otherData"]["dropped_events"])
for p in problems[:10]:
    print("FAIL: " + p)
print("trace format: %s" % ("OK" if not problems else "FAIL"))
sys.exit(1 if problems else 0)

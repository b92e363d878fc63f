#!/usr/bin/python3
"""Compares rank 0's argument and result buffers together (tp-run --profile's
memory line; an in-place update moves a weight from one to the other) of
two programs: a pipeline's first stage should hold only its own weights
and results, fewer bytes than the unsplit program's rank.

usage: compare_rank_buffers.py <unsplit-profile.txt> <pipeline-profile.txt>
Exits 1 unless the second holds fewer."""
import re
import sys


def buffers(path):
    with open(path) as f:
        m = re.search(r"memory \(rank 0\): arguments (\d+) bytes, results (\d+) bytes",
                      f.read())
    if not m:
        sys.exit(f"{path}: no memory line")
    return int(m.group(1)), int(m.group(2))


(a1, r1), (a2, r2) = buffers(sys.argv[1]), buffers(sys.argv[2])
ok = a2 + r2 < a1 + r1
print(f"rank 0: arguments and results {a1} + {r1} -> {a2} + {r2} bytes: "
      + ("LOWER" if ok else "NOT LOWER"))
sys.exit(0 if ok else 1)

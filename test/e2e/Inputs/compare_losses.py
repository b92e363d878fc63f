#!/usr/bin/python3
"""Compares the `step k: loss v` lines of tp-run --steps runs.

usage: compare_losses.py <tolerance> <run1.txt> <run2.txt> ...
Prints the first and last loss of the first run, whether the loss went down
at every step, and the largest relative difference of any step's loss
between the first run and each other run; exits 1 if the loss did not
decrease or a difference exceeds the tolerance.
"""
import re
import sys

tol = float(sys.argv[1])
runs = []
for path in sys.argv[2:]:
    with open(path) as f:
        runs.append([float(m.group(1)) for m in re.finditer(r"step \d+: loss (\S+)", f.read())])
first = runs[0]
ok = len(first) > 1 and all(b < a for a, b in zip(first, first[1:]))
print(f"{len(first)} steps: loss {first[0]:.6g} -> {first[-1]:.6g}, "
      f"{'decreasing' if ok else 'NOT DECREASING'}")
for path, run in zip(sys.argv[3:], runs[1:]):
    if len(run) != len(first):
        print(f"{path}: {len(run)} steps, expected {len(first)} MISMATCH")
        ok = False
        continue
    worst = max(abs(a - b) / abs(a) for a, b in zip(first, run))
    good = worst <= tol
    ok &= good
    print(f"{path}: max relative difference {worst:.3g} "
          f"{'OK' if good else 'MISMATCH'} (tolerance {tol:g})")
sys.exit(0 if ok else 1)

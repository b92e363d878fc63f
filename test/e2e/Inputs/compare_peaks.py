#!/usr/bin/python3
"""Compares the planned peak of temporaries in two tp-compile --report
outputs (the "memory per device after buffer reuse" line).

usage: compare_peaks.py <without.txt> <with.txt>
Prints both peaks and LOWER when the second is lower; exits 1 otherwise.
"""
import re
import sys


def peak(path):
    m = re.search(r"temporaries (\d+) bytes at their peak", open(path).read())
    if not m:
        sys.exit(f"no 'after buffer reuse' line in {path}")
    return int(m.group(1))


before, after = peak(sys.argv[1]), peak(sys.argv[2])
lower = after < before
print(f"planned peak of temporaries: {before} -> {after} bytes "
      f"({after / before:.2f}x): {'LOWER' if lower else 'NOT LOWER'}")
sys.exit(0 if lower else 1)

#!/usr/bin/python3
"""Compares the per-stage planned peaks of two tp-compile --report outputs
(a GPipe and a 1F1B build of the same pipeline).

usage: compare_stage_peaks.py <gpipe-report.txt> <1f1b-report.txt>
Prints each stage's two peaks; exits 1 unless 1F1B's first stage plans a
lower peak than GPipe's (it keeps fewer microbatches' activations)."""
import re
import sys


def peaks(path):
    with open(path) as f:
        return {int(s): int(b) for s, b in re.findall(
            r"stage (\d+): temporaries (\d+) bytes at their peak", f.read())}


gpipe, f1b = peaks(sys.argv[1]), peaks(sys.argv[2])
if not gpipe or gpipe.keys() != f1b.keys():
    sys.exit("no matching stage lines in the reports")
for s in sorted(gpipe):
    verdict = ("1F1B LOWER" if f1b[s] < gpipe[s] else
               "SAME" if f1b[s] == gpipe[s] else "1F1B HIGHER")
    print(f"stage {s}: gpipe {gpipe[s]} bytes, 1f1b {f1b[s]} bytes: {verdict}")
sys.exit(0 if f1b[0] < gpipe[0] else 1)

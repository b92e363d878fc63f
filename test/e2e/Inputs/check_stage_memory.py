#!/usr/bin/python3
"""Reads the tp-run --profile output of a GPipe and a 1F1B build of the same
pipeline; per stage, checks that the measured peak of temporaries (the
runtime's allocator) agrees with the plan within 1% (--report's per-stage
figure, which counts the activations of the microbatches the schedule keeps
alive at once), and that 1F1B's measured peak is lower than GPipe's.

usage: check_stage_memory.py <gpipe-profile.txt> <1f1b-profile.txt>"""
import re
import sys


def stages(path):
    with open(path) as f:
        return {int(s): (int(m), int(p)) for s, m, p in re.findall(
            r"stage (\d+) \(rank \d+\): temporaries (\d+) bytes at their peak "
            r"\(planned (\d+) bytes\)", f.read())}


gpipe, f1b = stages(sys.argv[1]), stages(sys.argv[2])
if not gpipe or gpipe.keys() != f1b.keys():
    sys.exit("no matching stage lines in the profiles")
ok = True
for s in sorted(gpipe):
    (gm, gp), (fm, fp) = gpipe[s], f1b[s]
    def agree(measured, planned):
        return abs(measured - planned) <= 0.01 * planned
    good = agree(gm, gp) and agree(fm, fp) and fm < gm
    ok &= good
    print(f"stage {s}: gpipe measured {gm}, planned {gp} bytes"
          f"{'' if agree(gm, gp) else ' DIFFER'}; 1f1b measured {fm}, planned {fp} bytes"
          f"{'' if agree(fm, fp) else ' DIFFER'}; "
          + (f"1F1B LOWER by {gm - fm} bytes" if fm < gm else "1F1B NOT LOWER"))
sys.exit(0 if ok else 1)

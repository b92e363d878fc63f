"""Reads tp-run --profile output on stdin; checks that the temporaries a
step allocated at once (measured by the runtime's allocator) are within 1%
of tp-plan-peak-memory's plan in the manifest, and prints both."""
import re
import sys

text = sys.stdin.read()
m = re.search(r"temporaries (\d+) bytes at their peak \(planned (\d+) bytes\)", text)
if not m:
    sys.exit("no memory line in the profile:\n" + text)
measured, planned = int(m.group(1)), int(m.group(2))
ok = abs(measured - planned) <= 0.01 * planned
print("temporaries: measured %d bytes, planned %d bytes: %s"
      % (measured, planned, "AGREE (within 1%)" if ok else "DIFFER"))
sys.exit(0 if ok else 1)

#!/bin/bash
# On a machine with an NVIDIA GPU and tp's build dependencies: build (if
# needed), run the GPU lit tests, then every check of the GPU bundle (the
# runtime's CUDA gtests, the shared models against their references on 1
# GPU and over NCCL on every GPU, the benchmark MLP in TFLOP/s against the
# device's peak), one line per check with its figure. Unattended; a few
# minutes on one GPU.
#
#   ./scripts/gpu-check.sh            # the output also goes to build/gpu-check/report.txt
#
# Where the GPU machine has only CUDA (no LLVM, ONNX, OpenBLAS or MPI), make
# the bundle here and run it there instead:
#   scripts/gpu-bundle.sh --portable DIR    # then, on the GPU machine: DIR/run.sh
#
# Environment: GPU_CHECK_LAYERS / TOKENS / HIDDEN / FFN size the benchmark
# MLP (see scripts/gpu-bundle.sh).
set -u
cd "$(dirname "$0")/.." || exit 1
WORK=build/gpu-check
mkdir -p "$WORK"
REPORT=$WORK/report.txt
: > "$REPORT"
START=$(date +%s)
line() { printf '%-46s %s\n' "$1" "$2" | tee -a "$REPORT"; }
FAILED=0

if [ ! -x build/bin/tp-run ]; then
  (./scripts/setup.sh && ./scripts/build.sh) > "$WORK/build.log" 2>&1 ||
    { line "build" "FAILED (see $WORK/build.log)"; exit 1; }
fi
./scripts/gpu-bundle.sh "$WORK/bundle" > "$WORK/build.log" 2>&1 ||
  { line "build and bundle" "FAILED (see $WORK/build.log)"; exit 1; }
line "build and bundle" "ok ($(( $(date +%s) - START )) s)"

# The GPU tests of the lit suite (they compile, so they run here, not in
# the bundle).
LIT_OUT=$WORK/lit.log
/usr/lib/llvm-22/bin/lit -v build/test/e2e/cuda.test build/test/e2e/cuda-nccl.test \
  build/test/Target/cuda.test build/test/Target/cuda-errors.test > "$LIT_OUT" 2>&1
while read -r status name; do
  line "test $name" "$status"
  case $status in PASS|UNSUPPORTED) ;; *) FAILED=1 ;; esac
done < <(grep -E '^(PASS|FAIL|UNSUPPORTED|XFAIL|XPASS|UNRESOLVED|SKIPPED): ' "$LIT_OUT" |
         sed -E 's/^([A-Z]+): [^:]+ :: ([^ ]+).*/\1 \2/')

"$WORK/bundle/run.sh" || FAILED=1
cat "$WORK/bundle/report.txt" >> "$REPORT"
line "gpu-check" "$(( $(date +%s) - START )) s, $([ $FAILED = 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
exit $FAILED

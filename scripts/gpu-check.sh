#!/bin/bash
# On a machine with an NVIDIA GPU: build (if needed), run the GPU tests, the
# shared models against their references on 1 GPU (and N with NCCL when
# there are N), and a GEMM-bound benchmark of a large MLP, printing one line
# per check with its figure. Unattended; a few minutes on one GPU.
#
#   ./scripts/gpu-check.sh            # the output also goes to build/gpu-check/report.txt
#
# Environment: GPU_CHECK_LAYERS / TOKENS / HIDDEN / FFN size the benchmark
# MLP (default 2 layers, 8192 tokens, hidden 4096, ffn 16384: 4.4 TFLOP a
# step, 1 GiB of weights).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
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
ninja -C build > "$WORK/build.log" 2>&1 || { line "build" "FAILED (see $WORK/build.log)"; exit 1; }
line "build" "ok ($(( $(date +%s) - START )) s)"
BIN=$ROOT/build/bin
PATH=$BIN:/usr/lib/llvm-22/bin:$PATH

if ! DEVICES=$(tp-run --cuda-devices); then
  line "GPU" "none: $DEVICES"
  exit 1
fi
NGPU=$(grep -c '^GPU ' <<< "$DEVICES")
while read -r d; do line "device" "$d"; done <<< "$DEVICES"

# The GPU tests: lit's e2e and target tests, the runtime's gtests.
LIT_OUT=$WORK/lit.log
/usr/lib/llvm-22/bin/lit -v build/test/e2e/cuda.test build/test/e2e/cuda-nccl.test \
  build/test/Target/cuda.test build/test/Target/cuda-errors.test > "$LIT_OUT" 2>&1
while read -r status name; do
  line "test $name" "$status"
  case $status in PASS|UNSUPPORTED) ;; *) FAILED=1 ;; esac
done < <(grep -E '^(PASS|FAIL|UNSUPPORTED|XFAIL|XPASS|UNRESOLVED|SKIPPED): ' "$LIT_OUT" |
         sed -E 's/^([A-Z]+): [^:]+ :: ([^ ]+).*/\1 \2/')

GTEST_OUT=$(build/unittests/runtime/tprt-unittests --gtest_filter='Cuda*' 2>&1)
while read -r status name; do
  line "gtest $name" "$status"
  [ "$status" = OK ] || FAILED=1
done < <(grep -E '^\[ +(OK|FAILED|SKIPPED) +\] Cuda\.' <<< "$GTEST_OUT" |
         sed -E 's/^\[ +([A-Z]+) +\] ([^ ]+).*/\1 \2/' | sort -u)

# The shared models on 1 GPU and, with NCCL, on every GPU.
M=test/models
MLP_PLAN="fc1=colwise,fc2=rowwise"
BLOCK_PLAN="attn.q=colwise,attn.k=colwise,attn.v=colwise,attn.o=rowwise,fc1=colwise,fc2=rowwise"
check() { # name, program dir, run arguments...
  local name=$1 dir=$2; shift 2
  local out
  if out=$("$@" 2>&1); then
    line "$name" "$(grep -m1 -o 'max |out - ref| = [^ ]* OK' <<< "$out")"
  else
    line "$name" "FAILED: $(tail -1 <<< "$out")"; FAILED=1
  fi
}
for model in mlp block; do
  plan=$MLP_PLAN; [ $model = block ] && plan=$BLOCK_PLAN
  tp-compile $M/$model/model.onnx --target cuda --mesh tp=1 --plan-entry $plan -o $WORK/$model-1/ &&
    check "$model, 1 GPU vs PyTorch" $WORK/$model-1 tp-run $WORK/$model-1 \
      --input x=$M/$model/input_x.npy --compare output=$M/$model/output.npy
  if [ "$NGPU" -ge 2 ] && command -v mpirun > /dev/null; then
    tp-compile $M/$model/model.onnx --target cuda --mesh tp=$NGPU --plan-entry $plan -o $WORK/$model-n/ &&
      check "$model, $NGPU GPUs (NCCL) vs PyTorch" $WORK/$model-n mpirun --allow-run-as-root \
        -np "$NGPU" tp-run $WORK/$model-n --backend nccl --input x=$M/$model/input_x.npy \
        --compare output=$M/$model/output.npy
  fi
done
tp-compile $M/mlp/model.onnx --target cuda --train --mesh tp=1 -o $WORK/train-1/ &&
  check "mlp train step, 1 GPU: loss vs PyTorch" $WORK/train-1 tp-run $WORK/train-1 \
    --input x=$M/mlp/input_x.npy --compare loss=$M/mlp/loss.npy

# GEMM-bound benchmark: TFLOP/s of a step (cuBLAS GEMMs plus the generated
# bias/relu/residual kernels; inputs and weights already on the GPU) against
# the device's peak, in fp32 and with TF32 tensor cores.
L=${GPU_CHECK_LAYERS:-2}; T=${GPU_CHECK_TOKENS:-8192}; H=${GPU_CHECK_HIDDEN:-4096}; F=${GPU_CHECK_FFN:-16384}
/usr/bin/python3 bench/gpu_mlp.py $WORK/big.onnx "$L" "$T" "$H" "$F"
FLOP=$(( 4 * L * T * H * F ))
NAME=$(head -1 <<< "$DEVICES")
# Dense peaks from NVIDIA's data sheets (SXM parts): fp32, TF32 tensor core.
case $NAME in
  *H100*|*H200*|*GH200*) PEAK32=67; PEAKTF=495 ;;
  *A100*) PEAK32=19.5; PEAKTF=156 ;;
  *L40S*) PEAK32=91.6; PEAKTF=183 ;;
  *) PEAK32=; PEAKTF= ;;
esac
bench() { # label, program dir, peak, mesh ranks, extra tp-run args...
  local label=$1 dir=$2 peak=$3 ranks=$4; shift 4
  local out ms
  out=$("$@" --input x=$WORK/x.npy --repeat 5 --profile 2>&1) ||
    { line "$label" "FAILED: $(tail -1 <<< "$out")"; FAILED=1; return; }
  ms=$(grep -m1 -o 'best [0-9.]* ms' <<< "$out" | awk '{print $2}')
  /usr/bin/python3 - "$label" "$ms" "$FLOP" "$peak" "$ranks" <<'PY' | tee -a "$REPORT"
import sys
label, ms, flop, peak, ranks = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
tf = flop / (ms * 1e-3) / 1e12
ratio = f", {tf / (float(peak) * ranks):.2f} of peak ({float(peak) * ranks:g})" if peak else ""
print(f"{label:<46s} {ms:.2f} ms/step, {tf:.1f} TFLOP/s{ratio}")
PY
}
tp-compile $WORK/big.onnx --target cuda --mesh tp=1 -o $WORK/big-1/ > /dev/null &&
  bench "MLP ${L}x${T}x${H}x${F}, 1 GPU, fp32" $WORK/big-1 "$PEAK32" 1 tp-run $WORK/big-1 &&
  bench "MLP ${L}x${T}x${H}x${F}, 1 GPU, tf32" $WORK/big-1 "$PEAKTF" 1 tp-run $WORK/big-1 --tf32
if [ "$NGPU" -ge 2 ] && command -v mpirun > /dev/null; then
  tp-compile $WORK/big.onnx --target cuda --mesh tp=$NGPU \
      --plan-entry 'layers.*.fc1=colwise,layers.*.fc2=rowwise' -o $WORK/big-n/ > /dev/null &&
    bench "MLP, $NGPU GPUs (Megatron, NCCL), tf32" $WORK/big-n "$PEAKTF" "$NGPU" \
      mpirun --allow-run-as-root -np "$NGPU" tp-run $WORK/big-n --backend nccl --tf32
fi
line "total" "$(( $(date +%s) - START )) s, $([ $FAILED = 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
exit $FAILED

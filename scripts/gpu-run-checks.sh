#!/bin/bash
# The GPU checks, run from a bundle made by scripts/gpu-bundle.sh (copied
# there as run.sh): the runtime's CUDA gtests, the shared models on 1 GPU
# against PyTorch's references (forward, 2 thread ranks sharing the GPU,
# the training step's loss and gradients, 1-process NCCL), the models over
# NCCL on every GPU when there are several, and the benchmark MLP's step
# time in TFLOP/s against the device's peak (fp32 and TF32). One line per
# check with its figure; exit status 0 when every check passed.
#
#   DIR/run.sh            # the lines also go to DIR/report.txt
#
# Needs the NVIDIA driver, CUDA 13's cudart and cuBLAS, NCCL (found in the
# usual places or pip's nvidia-* wheels), and python3 with numpy (to write
# the benchmark's weights). Nothing is compiled here.
set -u
B=$(cd "$(dirname "$0")" && pwd)
REPORT=$B/report.txt
W=$(mktemp -d)
: > "$REPORT"
START=$(date +%s)
line() { printf '%-46s %s\n' "$1" "$2" | tee -a "$REPORT"; }
FAILED=0

# The CUDA libraries the machine has, wherever its toolkit or wheels put them.
LIBS=$B/lib
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  ldconfig -p 2> /dev/null | grep -q "$lib " && continue
  found=$(find /usr/local/cuda*/ /usr/lib /opt -name "$lib" 2> /dev/null | head -1)
  [ -n "$found" ] && LIBS=$LIBS:$(dirname "$found")
done
export LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TP_RUN=$B/bin/tp-run
PY=
for p in python3 /usr/bin/python3; do
  if command -v $p > /dev/null && $p -c 'import numpy' 2> /dev/null; then PY=$p; break; fi
done

if ! DEVICES=$($TP_RUN --cuda-devices 2>&1); then
  line "GPU" "none: $DEVICES"
  exit 1
fi
NGPU=$(grep -c '^GPU ' <<< "$DEVICES")
while read -r d; do line "device" "$d"; done <<< "$DEVICES"

GTEST_OUT=$("$B/bin/tprt-unittests" --gtest_filter='Cuda*' 2>&1)
while read -r status name; do
  line "gtest $name" "$status"
  [ "$status" = OK ] || FAILED=1
done < <(grep -E '^\[ +(OK|FAILED|SKIPPED) +\] Cuda\.' <<< "$GTEST_OUT" |
         sed -E 's/^\[ +([A-Z]+) +\] ([^ ]+).*/\1 \2/' | sort -u)

# check LABEL COMPARISONS COMMAND...: COMPARISONS "OK" lines expected.
check() {
  local label=$1 want=$2 out ok; shift 2
  if out=$("$@" 2>&1) && ok=$(grep -c 'max |out - ref| = .* OK' <<< "$out") &&
     [ "$ok" = "$want" ]; then
    line "$label" "$(grep -m1 -o 'max |out - ref| = [^ ]* OK' <<< "$out")$([ "$want" -gt 1 ] && echo " (all $want)")"
  else
    line "$label" "FAILED: $(grep -v '^\s*$' <<< "$out" | tail -1)"; FAILED=1
  fi
}
run() { # program, model, more tp-run arguments...
  local p=$1 m=$2; shift 2
  $TP_RUN "$B/programs/$p" --model "$B/models/$m/model.onnx" \
    --input x="$B/models/$m/input_x.npy" "$@"
}
for m in mlp block; do
  check "$m, 1 GPU vs PyTorch" 1 run $m-1 $m --compare output="$B/models/$m/output.npy"
done
check "mlp, 2 thread ranks on 1 GPU vs PyTorch" 1 \
  run mlp-threads-2 mlp --compare output="$B/models/mlp/output.npy"
check "mlp train step, 1 GPU: loss + gradients" 5 run train-1 mlp \
  --compare loss="$B/models/mlp/loss.npy" --compare-grads "$B/models/mlp/grads"
check "mlp, 1-process NCCL vs PyTorch" 1 run mlp-1 mlp --backend nccl \
  --rendezvous "$W/nccl-id-1" --rank 0 --compare output="$B/models/mlp/output.npy"

# One process per GPU over NCCL (no MPI needed: a rendezvous file).
nccl_ranks() { # n, program, model, more arguments (rank 0's output is kept)...
  local n=$1 p=$2 m=$3 r id; shift 3
  id=$(mktemp -u "$W/id-XXXXXX")
  for ((r = 1; r < n; r++)); do
    run "$p" "$m" --backend nccl --rendezvous "$id" --rank $r > /dev/null 2>&1 &
  done
  run "$p" "$m" --backend nccl --rendezvous "$id" --rank 0 "$@"
  local status=$?
  wait
  return $status
}
for n in 2 4 8; do
  [ "$NGPU" -ge $n ] || continue
  for m in mlp block; do
    check "$m, $n GPUs (NCCL) vs PyTorch" 1 nccl_ranks $n $m-$n $m \
      --compare output="$B/models/$m/output.npy"
  done
done

# GEMM-bound benchmark: TFLOP/s of a step (cuBLAS GEMMs plus the generated
# bias/relu/residual kernels; the step's own time, inputs and weights
# already on the GPU) against the device's peak.
. "$B/bench/size.env"
if [ -z "$PY" ]; then
  line "benchmark" "FAILED: no python3 with numpy to write its weights"
  FAILED=1
else
  cp "$B/bench/big.onnx" "$W/big.onnx"
  $PY "$B/bench/gpu_mlp.py" --data-only "$W/big.onnx" "$L" "$T" "$H" "$F"
  FLOP=$(( 4 * L * T * H * F ))
  NAME=$(head -1 <<< "$DEVICES")
  # Dense peaks from NVIDIA's data sheets (SXM parts): fp32, TF32 tensor core.
  case $NAME in
    *H100*|*H200*) PEAK32=67; PEAKTF=495 ;;
    *A100*) PEAK32=19.5; PEAKTF=156 ;;
    *L40S*) PEAK32=91.6; PEAKTF=183 ;;
    *) PEAK32=; PEAKTF= ;;
  esac
  bench() { # label, peak per GPU, GPUs, command...
    local label=$1 peak=$2 gpus=$3 out ms; shift 3
    out=$("$@" --model "$W/big.onnx" --input x="$W/x.npy" --repeat 5 --profile 2>&1) ||
      { line "$label" "FAILED: $(tail -1 <<< "$out")"; FAILED=1; return; }
    ms=$(grep -m1 -o 'best [0-9.]* ms' <<< "$out" | awk '{print $2}')
    line "$label" "$(awk -v ms="$ms" -v flop="$FLOP" -v peak="$peak" -v g="$gpus" 'BEGIN {
      tf = flop / (ms * 1e-3) / 1e12
      printf "%.2f ms/step, %.1f TFLOP/s", ms, tf
      if (peak != "") printf ", %.2f of peak (%g)", tf / (peak * g), peak * g }')"
  }
  big() { # n, program arguments...
    local n=$1 r id; shift
    if [ "$n" = 1 ]; then $TP_RUN "$B/programs/big-1" "$@"; return; fi
    id=$(mktemp -u "$W/id-XXXXXX")
    for ((r = 1; r < n; r++)); do
      $TP_RUN "$B/programs/big-$n" --backend nccl --rendezvous "$id" --rank $r "$@" \
        > /dev/null 2>&1 &
    done
    $TP_RUN "$B/programs/big-$n" --backend nccl --rendezvous "$id" --rank 0 "$@"
    local status=$?
    wait
    return $status
  }
  S="MLP ${L}x${T}x${H}x${F}"
  bench "$S, 1 GPU, fp32" "$PEAK32" 1 big 1
  bench "$S, 1 GPU, tf32" "$PEAKTF" 1 big 1 --tf32
  for n in 2 4 8; do
    [ "$NGPU" = $n ] && bench "$S, $n GPUs (Megatron, NCCL), tf32" "$PEAKTF" $n big $n --tf32
  done
fi
rm -rf "$W"
line "total" "$(( $(date +%s) - START )) s, $([ $FAILED = 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
exit $FAILED

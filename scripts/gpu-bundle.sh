#!/bin/bash
# Prepares, on any machine (no GPU needed), everything the GPU checks run:
# the shared models compiled for CUDA (1 GPU; 2, 4 and 8 GPUs over NCCL;
# 2 thread ranks sharing one GPU), the training step, the benchmark MLP's
# graph compiled for 1..8 GPUs, the references, tp-run, libtprt, the
# runtime's gtests, and run.sh, which runs the checks where the GPU is
# (scripts/gpu-run-checks.sh).
#
#   scripts/gpu-bundle.sh [--portable] [--no-build] DIR
#
# The tools come from ${TP_BUILD_DIR:-build}, built first unless --no-build.
#
# --portable: libtprt and tp-run link LLVM Support statically
# (TP_PORTABLE_RUNTIME, built in build-portable/) and DIR/lib holds every
# shared library they need that a machine with only the CUDA toolkit lacks
# (ONNX, protobuf, OpenBLAS, OpenMPI), so DIR runs on such a machine (the
# device machines lent to sessions: no LLVM, no apt). cudart, cuBLAS and
# NCCL are the machine's own.
#
# Environment: GPU_CHECK_LAYERS / TOKENS / HIDDEN / FFN size the benchmark
# MLP (default 2 layers, 8192 tokens, hidden 4096, ffn 16384: 4.4 TFLOP a
# step, 1 GiB of weights written by run.sh, not carried).
set -euo pipefail
cd "$(dirname "$0")/.."
PORTABLE=0 BUILD_FIRST=1
while [ $# -gt 1 ]; do
  case $1 in
    --portable) PORTABLE=1 ;;
    --no-build) BUILD_FIRST=0 ;;
    *) break ;;
  esac
  shift
done
if [ $# -ne 1 ] || [[ $1 == -* ]]; then
  echo "usage: scripts/gpu-bundle.sh [--portable] [--no-build] DIR" >&2
  exit 2
fi
DIR=$1
BUILD=${TP_BUILD_DIR:-build}
BIN=$BUILD/bin
[ $BUILD_FIRST = 0 ] || ./scripts/build.sh > /dev/null

RUNTIME=$BUILD
if [ $PORTABLE = 1 ]; then
  RUNTIME=build-portable
  [ -f $RUNTIME/build.ninja ] || cmake -G Ninja -S . -B $RUNTIME \
    -DCMAKE_BUILD_TYPE=Release -DTP_PORTABLE_RUNTIME=ON > /dev/null
  ninja -C $RUNTIME tp-run tprt_cuda tprt-unittests > /dev/null
fi

rm -rf "$DIR"
mkdir -p "$DIR"/{bin,lib,models,programs,bench}
cp $RUNTIME/bin/tp-run $RUNTIME/unittests/runtime/tprt-unittests "$DIR/bin/"
cp $RUNTIME/lib/libtprt.so $RUNTIME/lib/libtprt_cuda.so "$DIR/lib/"
cp scripts/gpu-run-checks.sh "$DIR/run.sh"
cp bench/gpu_mlp.py "$DIR/bench/"
for m in mlp block; do
  mkdir -p "$DIR/models/$m"
  cp -r test/models/$m/{model.onnx,input_x.npy,output.npy,loss.npy,grads} "$DIR/models/$m/"
done

compile() { # program name, model, tp-compile arguments...
  local name=$1 model=$2; shift 2
  $BIN/tp-compile "$model" --target cuda "$@" -o "$DIR/programs/$name/" > /dev/null
}
M=test/models
MLP_PLAN="fc1=colwise,fc2=rowwise"
BLOCK_PLAN="attn.q=colwise,attn.k=colwise,attn.v=colwise,attn.o=rowwise,fc1=colwise,fc2=rowwise"
compile mlp-1 $M/mlp/model.onnx --mesh tp=1 --plan-entry $MLP_PLAN
compile block-1 $M/block/model.onnx --mesh tp=1 --plan-entry $BLOCK_PLAN
compile mlp-threads-2 $M/mlp/model.onnx --mesh tp=2 --plan-entry $MLP_PLAN
compile train-1 $M/mlp/model.onnx --train --mesh tp=1
for n in 2 4 8; do
  compile mlp-$n $M/mlp/model.onnx --mesh tp=$n --plan-entry $MLP_PLAN
  compile block-$n $M/block/model.onnx --mesh tp=$n --plan-entry $BLOCK_PLAN
done

L=${GPU_CHECK_LAYERS:-2}; T=${GPU_CHECK_TOKENS:-8192}; H=${GPU_CHECK_HIDDEN:-4096}; F=${GPU_CHECK_FFN:-16384}
echo "L=$L T=$T H=$H F=$F" > "$DIR/bench/size.env"
/usr/bin/python3 bench/gpu_mlp.py --graph-only "$DIR/bench/big.onnx" "$L" "$T" "$H" "$F"
rm -rf "$DIR/bench/onnx_pb2.py" "$DIR/bench/__pycache__"
# The ONNX checker wants the data file to exist: a sparse stand-in while
# compiling (tp-compile never reads weights); run.sh writes the real one.
truncate -s $(( 4 * L * (2 * H * F + F + H) )) "$DIR/bench/big.onnx.data"
compile big-1 "$DIR/bench/big.onnx" --mesh tp=1
for n in 2 4 8; do
  compile big-$n "$DIR/bench/big.onnx" --mesh tp=$n \
    --plan-entry 'layers.*.fc1=colwise,layers.*.fc2=rowwise'
done
rm "$DIR/bench/big.onnx.data"

if [ $PORTABLE = 1 ]; then
  # What the loader finds outside DIR, less what every Linux has and the
  # CUDA libraries, which must match the machine's driver.
  LD_LIBRARY_PATH="$DIR/lib" ldd "$DIR/bin/tp-run" "$DIR/bin/tprt-unittests" "$DIR/lib/libtprt.so" "$DIR/lib/libtprt_cuda.so" |
    awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
      case $name in
        libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*) ;;
        libstdc++.so*|libgcc_s.so*|libz.so*) ;;
        libcudart.so*|libcublas.so*|libcublasLt.so*|libnccl.so*) ;;
        libtprt.so|libtprt_cuda.so) ;;
        *) cp -L "$path" "$DIR/lib/$name" ;;
      esac
    done
fi
echo "gpu-bundle: $DIR ($(du -sh "$DIR" | cut -f1)); run $DIR/run.sh where the GPU is"

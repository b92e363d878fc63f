#!/usr/bin/env bash
# README quick start, command 1: install what is missing, build, and run the
# main job on the embedded default: the PyTorch MLP (test/models/mlp)
# compiled with a 2-way tensor-parallel plan (fc1 colwise, fc2 rowwise), run
# on 2 in-process ranks, compared with PyTorch's output.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
bin="${TP_BUILD_DIR:-build}/bin"
out="${TP_DEMO_DIR:-${TP_BUILD_DIR:-build}/demo-mlp-tp2}"

echo "demo: compiling test/models/mlp/model.onnx for 2 devices (fc1=colwise, fc2=rowwise)"
"$bin/tp-compile" test/models/mlp/model.onnx --mesh tp=2 \
    --plan-entry fc1=colwise,fc2=rowwise --report -o "$out/" -v
echo "demo: running it on 2 in-process ranks"
"$bin/tp-run" "$out" --ranks 2 --input x=test/models/mlp/input_x.npy \
    --output "$out/output.npy" --compare output=test/models/mlp/output.npy --profile

#!/usr/bin/env bash
# README quick start, command 1: install what is missing, build, and run the
# main job on the embedded default: the Megatron MLP of docs/examples,
# partitioned for 2 devices. Prints the per-device program and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir="${TP_BUILD_DIR:-build}"

example=docs/examples/megatron-mlp.mlir
pipeline='builtin.module(tp-lower-to-linalg,func.func(sharding-propagation,shard-partition,canonicalize))'
out=$("$build_dir/bin/tp-opt" "$example" --pass-pipeline="$pipeline")
echo "$out"
echo
echo "demo: $example partitioned for 2 devices:"
echo "  per-device signature: $(echo "$out" | grep -o 'func.func @mlp([^)]*)' )"
echo "  collectives: $(echo "$out" | grep -c 'shard.all_reduce') all_reduce, $(echo "$out" | grep -Ec 'shard.all_(gather|to_all|slice)|shard.reduce_scatter') other"

#!/usr/bin/env bash
# Configures (once) and builds tp with Ninja into ${TP_BUILD_DIR:-build}.
# Incremental: reruns rebuild only what changed; ccache is used when present.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${TP_BUILD_DIR:-build}"

if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build_dir"

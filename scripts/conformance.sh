#!/usr/bin/env bash
# Runs the whole ONNX backend test suite (Debian's libonnx-testdata) through
# tp on 1 and 2 ranks, rewrites docs/Conformance.md and
# test/conformance/expected-passes.txt, and keeps every case's result in
# build/conformance.json. About 2 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
./scripts/build.sh >/dev/null
build_dir="${TP_BUILD_DIR:-build}"
/usr/bin/python3 test/conformance/conformance.py --tp-bin "$build_dir/bin" \
  --json "$build_dir/conformance.json" --markdown docs/Conformance.md \
  --expected test/conformance/expected-passes.txt --update-expected "$@"

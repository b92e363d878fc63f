#!/usr/bin/env bash
# Rewrites the supported-ops table of docs/Importer.md from the importer's
# own list (tp-compile --list-onnx-ops); test/Import/supported-ops.test
# checks that they agree.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${TP_BUILD_DIR:-build}"
table=$(mktemp)
"$build_dir/bin/tp-compile" --list-onnx-ops > "$table"
sed -i -e "/BEGIN supported-ops/,/END supported-ops/{//!d}" \
    -e "/BEGIN supported-ops/r $table" docs/Importer.md
rm -f "$table"

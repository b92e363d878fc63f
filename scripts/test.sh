#!/usr/bin/env bash
# README quick start, command 2: install what is missing, build, run every
# test (lit suite) and print the summary. Exits non-zero on any failure,
# also when clang 22 rejects code gcc accepted (scripts/check-clang.sh: the
# sanitizer and fuzz builds use clang).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
scripts/check-clang.sh
cmake --build "${TP_BUILD_DIR:-build}" --target check-tp

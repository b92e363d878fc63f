#!/usr/bin/env bash
# README quick start, command 2: install what is missing, build, run every
# test (lit suite) and print the summary. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cmake --build "${TP_BUILD_DIR:-build}" --target check-tp

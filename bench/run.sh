#!/usr/bin/env bash
# One command for tp's benchmarks: installs what they need (Debian's
# python3-torch for the PyTorch baselines), builds, and runs bench/run.py,
# writing docs/Performance.md. Arguments go to bench/run.py (--layers,
# --hidden, --seq, --repeat ...); the defaults are the issue's
# model (8 layers, hidden 1024, 2048 tokens) and take several minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-torch
fi
./scripts/build.sh >/dev/null
build_dir="${TP_BUILD_DIR:-build}"
/usr/bin/python3 bench/run.py --tp-bin "$build_dir/bin" --workdir "$build_dir/bench" \
  --markdown docs/Performance.md "$@"

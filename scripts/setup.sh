#!/usr/bin/env bash
# Installs the Debian packages tp builds and tests with (the dependency
# table of docs/Architecture.md plus the build tools). Idempotent: when everything is
# already installed it touches nothing and needs no network.
set -euo pipefail

packages=(
  # build tools
  cmake ninja-build g++ ccache python3 git
  # MLIR 22 / LLVM 22 (libMLIR.so, mlir-tblgen) and the test tools (lit, FileCheck, not)
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # ONNX (protobuf classes, checker, shape inference, text parser)
  libonnx-dev libprotobuf-dev protobuf-compiler
  # CPU GEMM, multi-process runtime, JSON, runtime unit tests
  libopenblas-dev libopenmpi-dev openmpi-bin nlohmann-json3-dev libgtest-dev
  # CPU convolutions and their gradients (oneDNN 2.6, PyTorch's library)
  libdnnl-dev
  # LLVM's OpenMP runtime: the teams of compiled programs' parallel loop nests
  libomp5-14
  # the model file's SHA-256 (OpenSSL's libcrypto)
  libssl-dev
  # reference data and baselines
  python3-numpy python3-protobuf
  # the Python package (python/): its binding, its tests, and the PyTorch
  # modules tp.parallelize_module exports
  pybind11-dev python3-dev python3-pytest python3-torch
  # real model classes for fixtures and the package's tests (torchvision's ViT)
  python3-torchvision
  # the ONNX backend test suite (test/conformance)
  libonnx-testdata
  # clang 22, the toolchain of LLVM 22: scripts/check-clang.sh (CI) keeps the
  # code compiling with it, and the sanitizer and fuzz builds use it and its
  # sanitizer and libFuzzer runtimes
  clang-22 libclang-rt-22-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

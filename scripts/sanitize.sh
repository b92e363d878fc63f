#!/usr/bin/env bash
# The sanitizer build: tp (compiler, runtime, tools) with AddressSanitizer
# and UndefinedBehaviorSanitizer, and the whole lit suite run on it.
#
#   scripts/sanitize.sh                   configure, build, run the suite
#   scripts/sanitize.sh --configure-only  (what scripts/fuzz.sh uses)
#
# Built with clang 22 in ${TP_FUZZ_BUILD_DIR:-build-sanitize} (also the fuzz
# targets' tree: -DTP_FUZZ=ON), without the CUDA runtime (it cannot run
# here and cudart does not load under ASan's shadow memory reservations).
# Leaks: LeakSanitizer runs; what it reports in libraries outside tp is
# listed, with the reason, in scripts/lsan-suppressions.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TP_FUZZ_BUILD_DIR:-build-sanitize}
# clang 22, the toolchain of the LLVM tp builds on (scripts/setup.sh
# installs it with its sanitizer and libFuzzer runtimes, libclang-rt-22-dev).
cxx=$(command -v clang++-22 || true)
cc=$(command -v clang-22 || true)
if [ -z "$cxx" ] || [ -z "$cc" ]; then
  echo "sanitize.sh: needs clang 22 (libFuzzer and the sanitizer runtimes): scripts/setup.sh installs clang-22 and libclang-rt-22-dev" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  # -O1 with line tables: readable reports at a fraction of -g's link time.
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DTP_SANITIZE=ON -DTP_FUZZ=ON -DTP_ENABLE_CUDA=OFF > /dev/null
fi
[ "${1:-}" = --configure-only ] && exit 0
ninja -C "$build"
# halt_on_error: the first report fails the test that caused it.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its free slab
# space from header code that tp's instrumented code inlines, while the
# uninstrumented copy in libMLIR.so hands the same memory out without
# unpoisoning it (false use-after-poison in MLIR's attribute storage).
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:allow_user_poisoning=0
# OpenMPI unloads its components at MPI_Finalize, leaving their leaks
# without a module name for the suppressions to match: keep them loaded.
export OMPI_MCA_mca_base_component_disable_dlclose=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0
ninja -C "$build" check-tp

#!/usr/bin/env bash
# Fuzzes tp's parsers of user files with libFuzzer, each target for a given
# time, and prints one line per target: executions, corpus, crashes.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]    (default: 600 s, every target)
#
# Targets (tools/fuzz): fuzz-onnx (binary and text models, through the whole
# import), fuzz-plan (plan files, --mesh and --plan-entry strings, applied
# to the MLP model), fuzz-npy (.npy inputs), fuzz-manifest (program
# manifests), fuzz-external-data (external-data locations, which must stay
# inside the model's folder). Builds them first in ${TP_FUZZ_BUILD_DIR:-build-sanitize}
# with clang, AddressSanitizer and UBSan (the same tree as
# scripts/sanitize.sh). Seeds come from the test models, plans and inputs;
# the corpus grows in <build>/fuzz/corpus/<target>; a crash is written to
# <build>/fuzz/crashes/ and makes the script exit 1 (rerun it with
# `<build>/bin/<target> <crash file>`, then make it a regression test).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz-onnx fuzz-plan fuzz-npy fuzz-manifest fuzz-external-data)
build=${TP_FUZZ_BUILD_DIR:-build-sanitize}

scripts/sanitize.sh --configure-only
ninja -C "$build" "${targets[@]}" > /dev/null

# Seeds: small files of each kind from the test suite.
seeds() {
  case $1 in
    fuzz-onnx) find test/models test/Import test/e2e/Inputs -size -256k \
                 \( -name '*.onnx' -o -name '*.onnxtxt' \) ;;
    fuzz-plan) find test/Plan/Inputs test/e2e/Inputs -name '*.json' ;;
    fuzz-npy) find test/models -size -64k -name '*.npy' -print0 |
                sort -z | tr '\0' '\n' | sed -n 1,50p ;;
    fuzz-manifest) find tools/fuzz/seeds -name '*.json' ;;
    fuzz-external-data) find tools/fuzz/seeds -name '*.location' ;;
  esac
}

status=0
for t in "${targets[@]}"; do
  corpus=$build/fuzz/corpus/$t crashes=$build/fuzz/crashes
  mkdir -p "$corpus" "$crashes"
  seeds "$t" | while read -r f; do cp "$f" "$corpus/" 2>/dev/null || true; done
  log=$build/fuzz/$t.log
  # -rss_limit_mb: a model or header that makes tp allocate gigabytes is
  # a finding too. -timeout: one input running 30 s is a hang.
  rc=0 start=$(date +%s)
  # allow_user_poisoning=0: as in scripts/sanitize.sh.
  ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 "$build/bin/$t" "$corpus" \
    -max_total_time="$seconds" -rss_limit_mb=3072 -timeout=30 \
    -artifact_prefix="$crashes/$t-" -print_final_stats=1 > "$log" 2>&1 || rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  found=$(find "$crashes" -name "$t-*" | wc -l)
  echo "$t: $runs executions in $(( $(date +%s) - start )) s, corpus $(ls "$corpus" | wc -l) files, exit $rc, $found crash file(s)"
  if [ "$rc" != 0 ]; then
    status=1
    grep -m3 -E 'ERROR|SUMMARY|Test unit written' "$log" | sed 's/^/  /'
  fi
done
exit $status

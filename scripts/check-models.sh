#!/usr/bin/env bash
# test/models is a byte-for-byte copy of the reference models in
# ../shared/models (exported from PyTorch; never regenerated here), kept in
# the repository so that a clone tests on its own. This checks the copy
# against its checksums and, when ../shared/models exists, against it.
set -euo pipefail
cd "$(dirname "$0")/../test/models"
sha256sum --quiet -c SHA256SUMS
if [ -d ../../../shared/models ]; then
  for f in README.md mlp/* block/*; do
    cmp -s "$f" "../../../shared/models/$f" || { echo "differs from shared: $f"; exit 1; }
  done
  echo "check-models: test/models matches ../shared/models"
else
  echo "check-models: checksums ok (../shared/models not present)"
fi

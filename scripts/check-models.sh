#!/usr/bin/env bash
# test/models holds the PyTorch reference models (exported from PyTorch;
# never regenerated here), kept in the repository so that a clone tests on
# its own. This checks them against their checksums.
set -euo pipefail
cd "$(dirname "$0")/../test/models"
sha256sum --quiet -c SHA256SUMS
echo "check-models: checksums ok"

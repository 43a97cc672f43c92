#!/usr/bin/env bash
# Regenerates the expected pass dumps that tests/cli/test_cli_passes.cpp compares with
# (`tilevit compile --dump-after PASS` of a one-layer small model on test16). Run after a
# change that is meant to change the compiled program, and review the diff.
# Usage: tools/regenerate_dump_fixtures.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/tilevit
[ -x "$bin" ] || { echo "$bin: not built (bash scripts/setup.sh)" >&2; exit 2; }
for pass in lower-ops place; do
  "$bin" compile --preset small --layers 1 --machine src/target/machines/test16.machine --optimization-steps 0 \
    --dump-after "$pass" > "tests/fixtures/dumps/small-1layer-test16.$pass.txt" 2>/dev/null
done
echo "regenerated tests/fixtures/dumps/small-1layer-test16.{lower-ops,place}.txt" >&2

#!/bin/bash
# The package and profile reproducers of tests/fixtures/fuzz/ are what tools/
# rebuild_fuzz_fixtures writes in the current formats: a format change that leaves them
# stale (so that they stop at a version check instead of their own site) fails here.
# Usage: fuzz_fixtures_current.sh REBUILD_FUZZ_FIXTURES FIXTURE_DIR
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$1" "$work" >/dev/null
for f in "$work"/*; do
  name=$(basename "$f")
  cmp -s "$f" "$2/$name" || {
    echo "FAIL: tests/fixtures/fuzz/$name is not the current rebuild: run" \
      "build/tools/rebuild_fuzz_fixtures tests/fixtures/fuzz (docs/FUZZING.md)" >&2
    exit 1
  }
done
echo "PASS: $(ls "$work" | wc -l) reproducers are current"

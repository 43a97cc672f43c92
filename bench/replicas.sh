#!/usr/bin/env bash
# The model against the original's measured builds (issue 31): compiles every replica of
# bench/replicas.json and prints it beside the original's published figures; JSON in
# bench/out/replicas/. Arguments go to bench/replicas.py (--update-doc, --check, --build DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/tilevit ] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
exec /usr/bin/python3 bench/replicas.py "$@"

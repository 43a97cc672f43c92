#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-14, ASan + UBSan, in build-fuzz/ or
# $TILEVIT_FUZZ_BUILD) and runs each for SECONDS (default 60), seeded from files tilevit writes (scripts/fuzz_seeds.sh,
# which needs the normal build's build/tilevit). Fails on any finding; findings are
# saved in fuzz/findings/ (add them to tests/fixtures/fuzz/ once fixed), the corpora
# grown so far in build-fuzz/corpus/. Prints libFuzzer's final figures per target.
# Usage: bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TILEVIT_FUZZ_BUILD:-build-fuzz}  # build directory of the fuzz configuration
seconds=${1:-60}
shift || true
targets=("$@")
# Every target in fuzz/ by default (fuzz/fuzz_<target>.cpp).
((${#targets[@]})) || targets=($(ls fuzz/fuzz_*.cpp | sed 's|fuzz/fuzz_\(.*\)\.cpp|\1|'))
[ -x build/tilevit ] || { echo "fuzz: build/tilevit missing (bash scripts/setup.sh builds it)" >&2; exit 2; }

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=None -DTILEVIT_FUZZ=ON \
  -DTILEVIT_BUILD_BENCH=OFF >/dev/null
if ! cmake --build "$build" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}") >"$build/build.log" 2>&1; then
  grep -E "error" "$build/build.log" | head -20 >&2
  exit 1
fi
bash scripts/fuzz_seeds.sh build/tilevit "$build/seeds" >/dev/null
mkdir -p fuzz/findings

failed=()
printf '%-18s %10s %8s %8s %s\n' target runs exec/s cov result
for t in "${targets[@]}"; do
  name=fuzz_$t
  mkdir -p "$build/corpus/$name"
  log=$build/$name.log
  # -malloc_limit_mb: one allocation over 1 GiB is a finding, as is an input that takes
  # over 10 s (a hang) or RSS over 2 GiB.
  status=ok
  "$build/fuzz/$name" "$build/corpus/$name" "$build/seeds/$name" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="fuzz/findings/$name-" >"$log" 2>&1 || status=FINDING
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo ?)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo ?)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo ?)
  printf '%-18s %10s %8s %8s %s\n' "$name" "$runs" "$speed" "$cov" "$status"
  if [ "$status" != ok ]; then
    failed+=("$name")
    grep -E "ERROR|SUMMARY|Test unit written|tilevit fuzz" "$log" | head -5 | sed 's/^/  /'
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (logs $build/fuzz_*.log, inputs fuzz/findings/)" >&2
  exit 1
fi

#!/usr/bin/env bash
# Writes the fuzz targets' seed corpora from files the tool itself writes (and the test
# fixtures), one folder per target: fuzz/corpus/<target>/ by default.
# Usage: bash scripts/fuzz_seeds.sh [TILEVIT_BINARY] [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
tilevit=${1:-build/tilevit}
corpus=${2:-fuzz/corpus}
machine=src/target/machines/test16.machine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for source in fuzz/fuzz_*.cpp; do mkdir -p "$corpus/$(basename "$source" .cpp)"; done

"$tilevit" compile --preset small --layers 1 --machine "$machine" --package "$corpus/fuzz_package/small1.tvpkg" >/dev/null 2>&1
"$tilevit" compile --preset small --layers 1 --machine "$machine" --profile --package "$corpus/fuzz_package/small1_profiled.tvpkg" \
  >/dev/null 2>&1
"$tilevit" run --preset small --layers 1 --machine "$machine" --inferences 1 --out "$work/run" >/dev/null 2>&1
cp "$work"/run/*.tvprof "$corpus/fuzz_profile/"
# A two-chip run's profile: row groups, link rows, micro-batches (docs/PROFILE_FORMAT.md).
"$tilevit" run --preset small --machine test16x2 --micro-batches 2 --inferences 1 --no-reference --out "$work/run2" \
  >/dev/null 2>&1
cp "$work/run2/profile.tvprof" "$corpus/fuzz_profile/system.tvprof"
# Two layers per chip, one in detail: each chip's loop extrapolated, each chip's bounds.
"$tilevit" run --preset siglip2-tiny --machine test16x2 --batch 1 --micro-batches 2 --inferences 1 --no-reference \
  --out "$work/run3" >/dev/null 2>&1
cp "$work/run3/profile.tvprof" "$corpus/fuzz_profile/system_loops.tvprof"
"$tilevit" machine > "$corpus/fuzz_machine/c600.machine"
"$tilevit" machine --machine "$machine" > "$corpus/fuzz_machine/test16.machine"
"$tilevit" machine --machine test16x2 > "$corpus/fuzz_machine/test16x2.machine"
"$tilevit" compile --preset siglip2-tiny --layers 2 --machine test16x2 \
  --package "$corpus/fuzz_pipeline_package/siglip2_tiny_x2.tvpkg" >/dev/null 2>&1
"$tilevit" compile --preset siglip2-tiny --layers 2 --machine test16x2 --optimization-steps 1 \
  --write-plan "$corpus/fuzz_pipeline_plan_file/siglip2_tiny_x2.plan.json" >/dev/null 2>&1
"$tilevit" compile --preset small --layers 1 --machine "$machine" --write-plan "$corpus/fuzz_plan_file/small1.plan.json" \
  >/dev/null 2>&1
"$tilevit" compile --preset small --layers 2 --machine "$machine" --optimization-steps 2 \
  --write-plan "$corpus/fuzz_plan_file/small2_searched.plan.json" >/dev/null 2>&1
cp tests/fixtures/calibration.json "$corpus/fuzz_calibration/"
cp tests/fixtures/sweeps/*.json "$corpus/fuzz_sweep_spec/"
cp tests/fixtures/kernels.json "$corpus/fuzz_kernel_measurements/"
cp src/target/machines/kernels.json "$corpus/fuzz_kernel_measurements/shipped_kernels.json"
"$tilevit" export-weights --preset small --layers 1 "$corpus/fuzz_safetensors/small1.safetensors" >/dev/null 2>&1
"$tilevit" reference --preset small --layers 1 --save-device "$corpus/fuzz_npy/embeddings.npy" >/dev/null 2>&1
cp tests/fixtures/images/*.npy "$corpus/fuzz_npy/"
find tests/fixtures/images -name '*.png' -size -64k -exec cp {} "$corpus/fuzz_image/" \;
find tests/fixtures/images -name '*.jpg' -size -64k -exec cp {} "$corpus/fuzz_image/" \;
# Checkpoint directories of every family (one sharded): their config, processor and index.
for preset in small clip-tiny dinov2-reg-tiny vit-tiny; do
  "$tilevit" export-weights "$work/$preset" --preset "$preset" --shards 2 >/dev/null 2>&1
  for f in config preprocessor_config model.safetensors.index; do cp "$work/$preset/$f.json" "$corpus/fuzz_hf_config/$preset-$f.json"; done
done
"$tilevit" export-weights "$work/clip1" --preset clip-tiny --layers 1 >/dev/null 2>&1
cp "$work/clip1/model.safetensors" "$corpus/fuzz_hf_checkpoint/clip-tiny1.safetensors"
# The reproducers of past findings seed their parsers too, except the big ones (the
# fuzzer's input size follows its largest seed; they stay in the ctest regression run).
seed_findings() { find tests/fixtures/fuzz -name "*.$1" -size -256k -exec cp {} "$corpus/$2/" \; ; }
seed_findings tvpkg fuzz_package
seed_findings tvprof fuzz_profile
seed_findings machine fuzz_machine
seed_findings json fuzz_calibration
seed_findings json fuzz_kernel_measurements
seed_findings plan.json fuzz_plan_file
for target in "$corpus"/*; do echo "seeds: $(ls "$target" | wc -l) in $target"; done

# Shared by sweep_mpi.sh and sweep_slurm.sh: a failing check ends the test loudly.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The merged CSV without its host-time columns (compile_seconds, seconds): what must not
# depend on how the points were run.
csv_without_timings() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i == "compile_seconds" || $i == "seconds") }
           { line = ""; for (i = 1; i <= NF; i++) if (!drop[i]) line = line (line == "" ? "" : ",") $i; print line }' "$1"
}

# A sweep of `points` (a multiple of 4) small-model points on test16: batch 1-2, 2 SRAM
# sizes (one too small: failed points), points/4 clocks.
write_spec() {
  local path=$1 points=$2
  local clocks=$((points / 4))
  cat >"$path" <<SPEC
{"tilevit_sweep": 1, "machine": "test16",
 "axes": {"preset": ["small"], "layers": [1], "batch": [1, 2], "sram_size": [163840, 638976],
          "clock_hz": {"from": 1000000000, "to": $((1000000000 + (clocks - 1) * 100000000)), "step": 100000000}}}
SPEC
}

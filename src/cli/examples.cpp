// Examples shown at the end of every command's --help (kept in one place so that the
// wording stays uniform; each runs as written from the source tree after a build).
#include <map>
#include <string>

#include "cli/command.hpp"

namespace tilevit::cli {

const std::string& examples_of(const std::string& command) {
  static const std::map<std::string, std::string> examples{
      {"", "Examples:\n"
           "  tilevit run                                   # the main job: So400m/14, 3 calls, checked vs FP32\n"
           "  tilevit run --preset small --out /tmp/small   # a tiny model in a second\n"
           "  tilevit <command> --help                      # each command's flags and examples\n"},
      {"run", "Examples:\n"
              "  tilevit run                                            # the main job, outputs in ./tilevit-out\n"
              "  tilevit run --preset small --inferences 1 --out /tmp/s # a tiny model\n"
              "  tilevit run --package p.tvpkg --check-numerics         # a compiled package, bit-exact check\n"
              "  tilevit run --weights model.safetensors --image cat.jpg --json\n"
              "  tilevit run --preset siglip2-tiny --machine test16x2 --batch 1 --micro-batches 3 --out /tmp/mb\n"
              "  mpirun -np 2 tilevit run --package pipe.tvpkg --inferences 1 --out /tmp/mb2   # one rank per chip\n"},
      {"compile", "Examples:\n"
                  "  tilevit compile --package p.tvpkg                      # So400m/14 for the C600\n"
                  "  tilevit compile --preset small --steps                 # every superstep's cost\n"
                  "  tilevit compile --preset small --profile --profile-granularity kernel --package p.tvpkg\n"
                  "  tilevit compile --preset small --package - > p.tvpkg   # the package on standard output\n"
                  "  tilevit compile --machine c600x2 --batch 1 --micro-batches 8 --package pipe.tvpkg\n"
                  "                                     # pipelined over 2 chips, 8 micro-batches of 1 per call\n"},
      {"reference", "Examples:\n"
                    "  tilevit reference --preset small                          # FP32 vs device numerics\n"
                    "  tilevit reference --package p.tvpkg --save-device d.npy   # exactly the device's numerics\n"
                    "  tilevit reference --fp32-only --repeat 5 --threads 2      # time the FP32 reference\n"
                    "  tilevit reference --package pipe.tvpkg   # a pipeline package: the whole pipeline's numerics\n"},
      {"export-weights", "Examples:\n"
                         "  tilevit export-weights model.safetensors                  # So400m/14, seed 0\n"
                         "  tilevit export-weights small.safetensors --preset small --layers 1\n"},
      {"verify", "Examples:\n"
                 "  tilevit verify p.tvpkg            # exit 1 on any violation\n"
                 "  tilevit verify p.tvpkg --json\n"
                 "  tilevit verify pipe.tvpkg             # a pipeline package: every stage and the system section\n"
                 "  tilevit verify pipe.tvpkg --stage 1   # stage 1 only\n"},
      {"inspect", "Examples:\n"
                  "  tilevit inspect tilevit-out/model.tvpkg\n"
                  "  tilevit inspect p.tvpkg --json\n"
                  "  tilevit inspect pipe.tvpkg --stage 1   # a pipeline package: stage 1 (chip 1), 0..K-1\n"},
      {"machine", "Examples:\n"
                  "  tilevit machine                                    # the embedded C600\n"
                  "  tilevit machine --machine src/target/machines/test16.machine --json\n"},
      {"cost-check", "Examples:\n"
                     "  tilevit cost-check tests/fixtures/calibration.json\n"
                     "  tilevit cost-check measured.json --machine my.machine --json\n"},
      {"memory-map", "Examples:\n"
                     "  tilevit memory-map p.tvpkg --out /tmp/map      # memory.json, memory.png, memory.html\n"
                     "  tilevit memory-map pipe.tvpkg --stage 1 --out /tmp/map1   # a pipeline package: stage 1's chip\n"},
      {"sweep", "Examples:\n"
                "  tilevit sweep tests/fixtures/sweeps/small-test16.json --out /tmp/sw --workers 2   # 32 points here\n"
                "  tilevit sweep tests/fixtures/sweeps/so400m-c600.json --out /tmp/so --slurm --max-parallel 2 --wait\n"
                "  mpirun -np 4 tilevit sweep tests/fixtures/sweeps/small-test16.json --out /tmp/sw --mpi\n"
                "  tilevit sweep merge /tmp/sw                      # sweep.csv, sweep.json, pareto.png, pareto.html\n"
                "  tilevit sweep run-point /tmp/sw --index 3        # one point (what a Slurm array task runs)\n"},
      {"profile", "Examples:\n"
                  "  tilevit profile query tilevit-out/profile.tvprof --group-by phase\n"
                  "  tilevit profile query tilevit-out/profile.tvprof --view layer --group-by operation\n"
                  "  tilevit profile diff a.tvprof b.tvprof\n"
                  "  tilevit profile compare heuristic/profile.tvprof tilevit-out/profile.tvprof -o compare.html\n"
                  "  tilevit profile render tilevit-out/profile.tvprof -o model.html\n"},
  };
  static const std::string none;
  const auto it = examples.find(command);
  return it == examples.end() ? none : it->second;
}

}  // namespace tilevit::cli

// The Slurm job scripts and submission errors (src/sweep/slurm.hpp). The submission
// itself is tested against a real single-node Slurm by sweep_slurm.sh.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/error.hpp"
#include "sweep/slurm.hpp"
#include "sweep_fixture.hpp"

namespace tilevit::sweep {
namespace {

TEST(SweepSlurm, ArrayRangeCoversEveryPoint) {
  EXPECT_EQ(array_range(200, 2), "0-199%2");
  EXPECT_EQ(array_range(1, 0), "0-0");
}

TEST(SweepSlurm, ShellQuotingSurvivesQuotes) { EXPECT_EQ(shell_quote("it's"), "'it'\\''s'"); }

TEST(SweepSlurm, ScriptsRunOnePointPerTaskAndMergeAfter) {
  const std::string dir = test::fresh_dir("slurm_scripts");
  const SweepDirectory d = test::small_sweep(dir);
  SlurmOptions o{"/opt/tile vit/tilevit", 2, false, false};
  const std::string array = array_script_text(d, o);
  EXPECT_EQ(array.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_NE(array.find("#SBATCH --output=" + dir + "/slurm/point-%a.log"), std::string::npos) << array;
  EXPECT_NE(array.find("exec '/opt/tile vit/tilevit' sweep run-point '" + dir + "' --index \"$SLURM_ARRAY_TASK_ID\""),
            std::string::npos)
      << array;
  EXPECT_NE(merge_script_text(d, o).find("exec '/opt/tile vit/tilevit' sweep merge '" + dir + "'"), std::string::npos);
  EXPECT_EQ(array.find("--retry-failed"), std::string::npos);
  o.retry_failed = true;
  EXPECT_NE(array_script_text(d, o).find("--threads 1 --retry-failed\n"), std::string::npos);
}

TEST(SweepSlurm, NoSbatchOnPathIsOneLineResourceError) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("slurm_missing"));
  const std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);
  try {
    submit_slurm(d, {"/bin/true", 1, false, false});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitResource);
    EXPECT_NE(std::string(e.what()).find("sbatch is not on PATH"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  ::setenv("PATH", saved.c_str(), 1);
}

}  // namespace
}  // namespace tilevit::sweep

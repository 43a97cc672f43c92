// `tilevit sweep` as a user runs it: a local sweep, its outputs and summary, rerun,
// merge, run-point, and the one-line errors with their exit codes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace tilevit {
namespace {

using test_support::run_tilevit;

std::string fresh(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_cli_sweep_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

const std::string kFixture = std::string(TILEVIT_FIXTURES) + "/sweeps/small-test16.json";

TEST(CliSweep, ALocalSweepWritesEveryOutputAndARerunSkipsAll) {
  const std::string out = fresh("local") + "/sweep";
  const auto r = run_tilevit("sweep " + kFixture + " --out " + out + " --workers 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["evaluated"], 32);
  EXPECT_EQ(j["merged"]["points"], 32);
  EXPECT_EQ(j["merged"]["ok"].get<int>() + j["merged"]["failed"].get<int>(), 32);
  EXPECT_GT(j["merged"]["ok"], 0);
  EXPECT_NE(r.err.find("point 32 of 32"), std::string::npos) << "progress on stderr";
  for (const char* f : {"spec.json", "sweep.csv", "sweep.json", "pareto.png", "pareto.html"})
    EXPECT_TRUE(std::filesystem::is_regular_file(out + "/" + f)) << f;
  const auto again = run_tilevit("sweep " + kFixture + " --out " + out + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["evaluated"], 0);
  EXPECT_EQ(nlohmann::json::parse(again.out)["skipped"], 32);
}

TEST(CliSweep, MergeAndRunPointAreStepsOfTheSameDirectory) {
  const std::string out = fresh("steps") + "/sweep";
  ASSERT_EQ(run_tilevit("sweep " + kFixture + " --out " + out).exit_code, 0);
  std::filesystem::remove(out + "/sweep.csv");
  const auto one = run_tilevit("sweep run-point " + out + " --index 31 --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["index"], 31);
  const auto merged = run_tilevit("sweep merge " + out + " --json");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(nlohmann::json::parse(merged.out)["merged"]["points"], 32);
  EXPECT_TRUE(std::filesystem::is_regular_file(out + "/sweep.csv"));
}

TEST(CliSweep, BadSpecsAreOneLineAndExit3) {
  const std::string dir = fresh("bad");
  const auto unknown = run_tilevit("sweep " + write(dir + "/a.json", R"({"tilevit_sweep": 1, "axes": {"tilez": [1]}})") +
                                   " --out " + dir + "/a");
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_EQ(unknown.err_lines(), 1) << unknown.err;
  EXPECT_NE(unknown.err.find("a.json: axes.tilez: unknown key \"tilez\""), std::string::npos) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/a")) << "nothing is written for a bad spec";
  const auto empty = run_tilevit("sweep " + write(dir + "/b.json", R"({"tilevit_sweep": 1, "axes": {"batch": []}})") +
                                 " --out " + dir + "/b --json");
  EXPECT_EQ(empty.exit_code, 3);
  EXPECT_NE(empty.err.find("axes.batch: empty range"), std::string::npos) << empty.err;
  EXPECT_EQ(nlohmann::json::parse(empty.out)["exit_code"], 3);
  EXPECT_EQ(run_tilevit("sweep " + dir + "/missing.json --out " + dir + "/c").exit_code, 3);
  const auto merge = run_tilevit("sweep merge " + dir);
  EXPECT_EQ(merge.exit_code, 3);
  EXPECT_NE(merge.err.find("not a sweep directory"), std::string::npos) << merge.err;
}

TEST(CliSweep, UsageErrorsExit2) {
  const std::string dir = fresh("usage");
  EXPECT_EQ(run_tilevit("sweep " + kFixture).exit_code, 2) << "no --out";
  EXPECT_EQ(run_tilevit("sweep " + kFixture + " --out " + dir + "/s --wait").exit_code, 2) << "--wait needs --slurm";
  EXPECT_EQ(run_tilevit("sweep " + kFixture + " --out " + dir + "/s --slurm --mpi").exit_code, 2);
  EXPECT_EQ(run_tilevit("sweep " + kFixture + " --out " + dir + "/s --slurm --workers 2").exit_code, 2);
  ASSERT_EQ(run_tilevit("sweep " + kFixture + " --out " + dir + "/s").exit_code, 0);
  const auto past = run_tilevit("sweep run-point " + dir + "/s --index 32");
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_NE(past.err.find("point 32: the sweep has 32 points"), std::string::npos) << past.err;
}

TEST(CliSweep, SlurmWithoutSbatchIsOneLineExit4) {
  const std::string dir = fresh("nosbatch");
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);  // the binary and sh are run by absolute path
  const auto r = run_tilevit("sweep " + kFixture + " --out " + dir + "/s --slurm");
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("sbatch is not on PATH"), std::string::npos) << r.err;
}

// Issue 34, item 8: a spec's mistakes are the spec's errors, before any point runs.
TEST(CliSweep, APresetTypoIsASpecErrorBeforeAnyPointRuns) {
  const std::string dir = fresh("typo");
  const auto r = run_tilevit("sweep " + write(dir + "/t.json", R"({"tilevit_sweep": 1, "machine": "test16",
      "axes": {"preset": ["small", "smal"]}})") + " --out " + dir + "/t");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("t.json: axes.preset[1]: unknown model preset \"smal\""), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/t")) << "no point ran, nothing was written";
}

TEST(CliSweep, DuplicateKeysInASpecAreRefused) {
  const std::string dir = fresh("dup");
  const auto r = run_tilevit("sweep " + write(dir + "/d.json", R"({"tilevit_sweep": 1, "machine": "test16",
      "axes": {"batch": [1], "batch": [2]}})") + " --out " + dir + "/d");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("d.json: key \"batch\" appears twice"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/d"));
}

TEST(CliSweep, ASweepWhereEveryPointFailedExits1) {
  const std::string dir = fresh("allfail");
  const std::string spec = write(dir + "/f.json", R"({"tilevit_sweep": 1, "machine": "test16",
      "axes": {"preset": ["small"], "layers": [1], "batch": [1, 2], "sram_size": [163840]}})");
  const auto r = run_tilevit("sweep " + spec + " --out " + dir + "/f --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["merged"]["failed"], 2);
  EXPECT_NE(r.err.find("every point failed (2)"), std::string::npos) << r.err;
  EXPECT_EQ(run_tilevit("sweep " + spec + " --out " + dir + "/f").exit_code, 1) << "a rerun finds them failed still";
}

TEST(CliSweep, AnotherSpecIntoAnExistingOutIsRefusedNotMerged) {
  const std::string dir = fresh("other");
  ASSERT_EQ(run_tilevit("sweep " + kFixture + " --out " + dir + "/s").exit_code, 0);
  const auto r = run_tilevit("sweep " + write(dir + "/o.json", R"({"tilevit_sweep": 1, "machine": "test16",
      "axes": {"preset": ["small"], "layers": [1]}})") + " --out " + dir + "/s");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(dir + "/s: holds another sweep spec's points"), std::string::npos) << r.err;
  const auto kept = run_tilevit("sweep merge " + dir + "/s --json");
  EXPECT_EQ(nlohmann::json::parse(kept.out)["merged"]["points"], 32) << "the directory is the first spec's still";
}

// Issue 34, item 2: a system of several chips is not costed as one of its chips.
TEST(CliSweep, AMultiChipMachineIsRefusedNotCostedAsOneChip) {
  const std::string dir = fresh("chips");
  const auto named = run_tilevit("sweep " + write(dir + "/n.json", R"({"tilevit_sweep": 1, "machine": "test16x2",
      "axes": {"preset": ["siglip2-tiny"]}})") + " --out " + dir + "/n");
  EXPECT_EQ(named.exit_code, 3) << named.err;
  EXPECT_EQ(named.err_lines(), 1) << named.err;
  EXPECT_NE(named.err.find("n.json: machine: \"test16x2\" is a system of 2 chips; a sweep costs one chip"),
            std::string::npos) << named.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/n"));
  const auto text = run_tilevit("machine --machine test16x2");
  std::ofstream(dir + "/two.machine") << text.out.substr(0, text.out.find("\n# derived"));
  const auto file = run_tilevit("sweep " + write(dir + "/f.json", R"({"tilevit_sweep": 1, "machine": "two.machine",
      "axes": {"preset": ["siglip2-tiny"]}})") + " --out " + dir + "/f");
  EXPECT_EQ(file.exit_code, 3) << file.err;
  EXPECT_NE(file.err.find("two.machine\" is a system of 2 chips"), std::string::npos) << file.err;
}

TEST(CliSweep, HelpShowsExamples) {
  const auto r = run_tilevit("sweep --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("tilevit sweep tests/fixtures/sweeps/small-test16.json --out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--slurm"), std::string::npos);
  EXPECT_NE(r.out.find("mpirun"), std::string::npos);
  EXPECT_NE(run_tilevit("sweep merge --help").out.find("Examples:"), std::string::npos);
}

}  // namespace
}  // namespace tilevit

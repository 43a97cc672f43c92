// `compile` and `run` on a machine of several chips, as a user runs them: the report per
// stage and link, the pipeline package run again by `run --package` (one batch or several
// micro-batches per call), and bad input as one line with exit 2 or 3.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace tilevit::test_support {
namespace {

const std::string kTiny = "--preset siglip2-tiny --machine test16x2 --batch 2";

std::string scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_cli_pipeline_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(PipelineCli, CompileReportsStagesLinksLatencyAndThroughput) {
  const std::string package = scratch("p.tvpkg");
  const CliResult r = run_tilevit("compile " + kTiny + " --json --package " + package);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["pipeline"];
  ASSERT_EQ(p["stages"].size(), 2u);
  EXPECT_EQ(p["stages"][0]["layers"].get<int>() + p["stages"][1]["layers"].get<int>(), 4);
  EXPECT_EQ(p["links"][0]["bytes"], 2 * 16 * 192 * 2);
  EXPECT_EQ(p["link_latency_calibrated"], false);
  EXPECT_EQ(p["latency_cycles"].get<std::uint64_t>(),
            p["stages"][0]["estimated_cycles"].get<std::uint64_t>() + p["stages"][1]["estimated_cycles"].get<std::uint64_t>() +
                p["links"][0]["cycles"].get<std::uint64_t>());

  const CliResult run = run_tilevit("run --package " + package + " --inferences 1 --check-numerics --json --out " +
                                    scratch("run"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["device_cycles"], p["latency_cycles"]);
  EXPECT_EQ(report["bit_exact_vs_device_numerics"], true);
  EXPECT_EQ(report["package_sha256"], j["package_sha256"]);
}

TEST(PipelineCli, ACallOfMicroBatchesIsCompiledIntoThePackageAndRun) {
  const std::string package = scratch("mb.tvpkg");
  const CliResult r = run_tilevit("compile --preset siglip2-tiny --machine test16x2 --batch 1 --micro-batches 3 --json "
                                  "--package " + package);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = nlohmann::json::parse(r.out)["pipeline"];
  EXPECT_EQ(p["micro_batches"], 3);
  EXPECT_EQ(p["images_per_call"], 3);
  EXPECT_EQ(p["makespan_cycles"].get<std::uint64_t>(),
            p["latency_cycles"].get<std::uint64_t>() + 2 * p["interval_cycles"].get<std::uint64_t>());

  const CliResult run = run_tilevit("run --package " + package + " --inferences 1 --check-numerics --json --out " +
                                    scratch("mb-run"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(run.out);
  const auto& call = report["calls"][0];
  EXPECT_EQ(call["images"], 3);
  EXPECT_EQ(call["cosines"].size(), 3u);
  EXPECT_EQ(call["device_cycles"], p["makespan_cycles"]);
  EXPECT_EQ(call["first_micro_batch_cycles"], p["latency_cycles"]);
  EXPECT_EQ(report["cycles_match_model"], true);
  EXPECT_EQ(report["bit_exact_vs_device_numerics"], true);
  EXPECT_EQ(std::filesystem::file_size(scratch("mb-run") + "/embeddings.npy"), 128 + 3 * 192 * 4u);

  const CliResult other = run_tilevit("run --package " + package + " --micro-batches 2 --out " + scratch("mb-other"));
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("built with --micro-batches 3, 2 asked"), std::string::npos) << other.err;
  EXPECT_EQ(other.err_lines(), 1) << other.err;
}

TEST(PipelineCli, OptimizationStepsSearchEveryStage) {
  const std::string report_file = scratch("search.json");
  const CliResult r = run_tilevit("compile " + kTiny + " --optimization-steps 2 --json --optimization-report " + report_file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = nlohmann::json::parse(r.out)["pipeline"];
  EXPECT_EQ(p["plan"], "searched per stage, up to 2 candidates each (--optimization-steps 2)");
  std::ifstream in(report_file);
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["stages"].size(), 2u);
  for (int s = 0; s < 2; ++s) {
    const auto& search = p["stages"][s]["search"];
    EXPECT_EQ(search["steps"], 2);
    EXPECT_LE(search["result_cycles"].get<std::uint64_t>(), search["baseline_cycles"].get<std::uint64_t>());
    EXPECT_EQ(search["result_cycles"], p["stages"][s]["estimated_cycles"]);
    EXPECT_EQ(report["stages"][s]["result"]["estimated_cycles"], search["result_cycles"]);
  }
  EXPECT_GE(p["heuristic"]["interval_cycles"].get<std::uint64_t>(), p["interval_cycles"].get<std::uint64_t>());

  const CliResult text = run_tilevit("compile " + kTiny + " --optimization-steps 2");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("; searched: 2 candidates, "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("with the heuristic plan per stage: latency "), std::string::npos) << text.out;

  const CliResult run = run_tilevit("run " + kTiny + " --optimization-steps 2 --inferences 1 --check-numerics --no-profile --json --out " +
                                    scratch("search-run"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto ran = nlohmann::json::parse(run.out);
  EXPECT_EQ(ran["pipeline"]["plan"], p["plan"]);
  EXPECT_EQ(ran["pipeline"]["stages"][1]["search"]["result_cycles"], p["stages"][1]["search"]["result_cycles"]);
  EXPECT_EQ(ran["package_sha256"], nlohmann::json::parse(r.out)["package_sha256"]);
  EXPECT_EQ(ran["bit_exact_vs_device_numerics"], true);
}

TEST(PipelineCli, WritePlanThenPlanRebuildsTheSamePackage) {
  const std::string plan = scratch("pipeline-plan.json");
  const CliResult written = run_tilevit("compile " + kTiny + " --optimization-steps 3 --json --write-plan " + plan);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const CliResult pinned = run_tilevit("compile " + kTiny + " --json --plan " + plan);
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  const auto a = nlohmann::json::parse(written.out), b = nlohmann::json::parse(pinned.out);
  EXPECT_EQ(b["package_sha256"], a["package_sha256"]);
  EXPECT_EQ(b["pipeline"]["plan"], "pinned per stage by a plan file");
  EXPECT_FALSE(b["pipeline"]["stages"][0].contains("search"));  // --plan alone: no search
  const CliResult run = run_tilevit("run " + kTiny + " --plan " + plan + " --inferences 1 --no-profile --json --out " +
                                    scratch("plan-run"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["package_sha256"], a["package_sha256"]);

  std::ifstream in(plan);
  nlohmann::json file = nlohmann::json::parse(in);
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> bad = {
      {[](nlohmann::json& f) { f["stages"].erase(1); }, "a plan of 1 stage(s) for 2 chips, not for 2 x test16"},
      {[](nlohmann::json& f) { f["stages"][1]["layers"] = 3; }, "the stages hold 5 layers, the model 4"},
      {[](nlohmann::json& f) { f["stages"][0]["layers"] = 0; }, "stages[0].layers: expected a whole number in 1..4"},
      {[](nlohmann::json& f) { f["stages"][1]["plan"]["batch"] = 1; }, "stages[1].plan: a plan for siglip2-tiny batch 1"},
      {[](nlohmann::json& f) { f = nlohmann::json(f["stages"][0]["plan"]); }, "a one-chip plan cannot pin a pipeline"},
  };
  for (const auto& [change, message] : bad) {
    nlohmann::json edited = file;
    change(edited);
    const std::string path = scratch("bad-plan.json");
    std::ofstream(path) << edited.dump();
    const CliResult r = run_tilevit("compile " + kTiny + " --plan " + path);
    EXPECT_EQ(r.exit_code, 3) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
  }
}

TEST(PipelineCli, MicroBatchesOutOfBoundsOrOnOneChipAreUsageErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"compile " + kTiny + " --micro-batches 0", "--micro-batches 0: expected 1 to 64"},
      {"compile " + kTiny + " --micro-batches 65", "--micro-batches 65: expected 1 to 64"},
      {"compile " + kTiny + " --micro-batches 33", "--micro-batches 33 of batch 2: 66 images per call, at most 64"},
      {"run " + kTiny + " --micro-batches 33 --out " + scratch("mb-big"), "66 images per call, at most 64"},
      {"compile --preset siglip2-tiny --machine test16 --micro-batches 2", "--micro-batches: the machine has one chip"},
      {"run --preset siglip2-tiny --machine test16 --micro-batches 2 --out " + scratch("mb-one"),
       "--micro-batches: the machine has one chip"},
  };
  for (const auto& [command, message] : cases) {
    const CliResult r = run_tilevit(command);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_NE(r.err.find(message), std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << command << ": " << r.err;
  }
}

TEST(PipelineCli, BadInputIsOneLine) {
  const std::string machine = scratch("bad.machine");
  const CliResult text = run_tilevit("machine --machine test16");
  std::ofstream(machine) << text.out.substr(0, text.out.find("\n# derived"))
                         << "\n[system]\nchips = 3\ntopology = line\n\n[link 0-1]\nbytes_per_second = 1\nlatency_cycles = 1\n";
  const CliResult disconnected = run_tilevit("compile --preset siglip2-tiny --machine " + machine);
  EXPECT_EQ(disconnected.exit_code, 3);
  EXPECT_NE(disconnected.err.find("[system] links do not connect chip 2"), std::string::npos) << disconnected.err;
  EXPECT_EQ(disconnected.err_lines(), 1) << disconnected.err;

  const CliResult too_few = run_tilevit("compile --preset siglip2-tiny --layers 1 --machine test16x2");
  EXPECT_EQ(too_few.exit_code, 3);
  EXPECT_NE(too_few.err.find("cannot fill a pipeline of 2 chips"), std::string::npos) << too_few.err;

  const CliResult no_fit = run_tilevit("compile --preset siglip-b16-224 --layers 4 --machine test16x2");
  EXPECT_EQ(no_fit.exit_code, 3);
  EXPECT_NE(no_fit.err.find("does not fit 2 x test16: stage 0"), std::string::npos) << no_fit.err;

  const CliResult steps = run_tilevit("compile " + kTiny + " --steps");
  EXPECT_EQ(steps.exit_code, 2);
  EXPECT_NE(steps.err.find("--steps, --kernels: not for a machine of several chips"), std::string::npos)
      << steps.err;
  EXPECT_EQ(steps.err_lines(), 1) << steps.err;
  const CliResult one_chip = run_tilevit("run --preset siglip2-tiny --machine test16 --mpi --out " + scratch("one"));
  EXPECT_EQ(one_chip.exit_code, 2);
  EXPECT_NE(one_chip.err.find("--mpi: the machine has one chip"), std::string::npos) << one_chip.err;
}

}  // namespace
}  // namespace tilevit::test_support

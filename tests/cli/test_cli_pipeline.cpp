// `compile` and `run` on a machine of several chips, as a user runs them: the report per
// stage and link, the pipeline package run again by `run --package`, and bad input as one
// line with exit 2 or 3.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

  const CliResult plan = run_tilevit("compile " + kTiny + " --optimization-steps 4");
  EXPECT_EQ(plan.exit_code, 2);
  const CliResult one_chip = run_tilevit("run --preset siglip2-tiny --machine test16 --mpi --out " + scratch("one"));
  EXPECT_EQ(one_chip.exit_code, 2);
  EXPECT_NE(one_chip.err.find("--mpi: the machine has one chip"), std::string::npos) << one_chip.err;
}

}  // namespace
}  // namespace tilevit::test_support

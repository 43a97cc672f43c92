// tilevit run's outputs and `tilevit profile render|query|diff`, as a user runs them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using namespace tilevit::test_support;
namespace fs = std::filesystem;

namespace {

const std::string kMachine = std::string(TILEVIT_FIXTURES) + "/../../src/target/machines/test16.machine";

std::string out_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("tilevit_cli_profile_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p.string();
}

std::string run_small(const std::string& name, const std::string& flags = "") {
  const std::string out = out_dir(name);
  const auto r = run_tilevit("run --preset small --machine " + kMachine + " --inferences 1 --no-reference --out " + out +
                             " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

}  // namespace

TEST(CliProfile, RunWritesAllViewsAndTheyDescribeTheSameCall) {
  const std::string out = run_small("views");
  for (const char* f : {"profile.tvprof", "model.html", "memory.html", "memory.json", "memory.png", "trace.json", "run.json"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  const auto report = nlohmann::json::parse(read_all(out + "/run.json"));
  ASSERT_TRUE(report.contains("outputs"));
  EXPECT_EQ(report["outputs"]["model.html"]["bytes"].get<std::uint64_t>(), fs::file_size(out + "/model.html"));
  // The header names the plan: the default search's.
  EXPECT_NE(read_all(out + "/model.html").find("plan: searched, 8 candidates"), std::string::npos);  // the title
  const auto q = run_tilevit("profile query " + out + "/profile.tvprof --group-by kind --json");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const auto j = nlohmann::json::parse(q.out);
  EXPECT_EQ(j["span_cycles"], report["device_cycles"]);  // the profile's span is the device's count
  EXPECT_EQ(j["tiles"], 16);
  EXPECT_FALSE(j["rows"].empty());
  fs::remove_all(out);
}

TEST(CliProfile, DiffOfTwoRunsOfOnePackageIsZeroAndAChangedFlagShowsSteps) {
  const std::string a = run_small("diff_a");
  const std::string b = run_small("diff_b", "--package " + a + "/model.tvpkg");
  const auto same = run_tilevit("profile diff " + a + "/profile.tvprof " + b + "/profile.tvprof --json");
  EXPECT_EQ(same.exit_code, 0) << same.err;
  const auto s = nlohmann::json::parse(same.out);
  EXPECT_TRUE(s["same_package"].get<bool>());
  EXPECT_EQ(s["span_delta"], 0);
  EXPECT_EQ(s["changed_steps"], 0);
  EXPECT_EQ(s["samples_differing"], 0);
  EXPECT_GT(s["samples_compared"].get<int>(), 0);

  // The heuristic plan at another W (a search from either W may reach the same plan).
  const std::string c = run_small("diff_c", "--exchange-stream-words 16 --optimization-steps 0");
  const auto changed = run_tilevit("profile diff " + a + "/profile.tvprof " + c + "/profile.tvprof");
  EXPECT_EQ(changed.exit_code, 1) << changed.err;  // as diff(1): the profiles differ
  EXPECT_NE(changed.err.find("warning: profiles of different packages"), std::string::npos) << changed.err;
  EXPECT_NE(changed.out.find("changed"), std::string::npos) << changed.out;
  const auto cj = nlohmann::json::parse(run_tilevit("profile diff " + a + "/profile.tvprof " + c + "/profile.tvprof --json").out);
  EXPECT_GT(cj["changed_steps"].get<int>(), 0);
  EXPECT_FALSE(cj["steps"].empty());
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

TEST(CliProfile, RenderWritesTheViewerAndTheTrace) {
  const std::string out = run_small("render", "--profile-granularity kernel --profile-iterations all");
  const auto html = run_tilevit("profile render " + out + "/profile.tvprof -o " + out + "/again.html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(read_all(out + "/again.html"), read_all(out + "/model.html"));  // deterministic
  const auto trace = run_tilevit("profile render " + out + "/profile.tvprof --format trace -o " + out + "/t.json");
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_TRUE(nlohmann::json::parse(read_all(out + "/t.json")).contains("traceEvents"));
  fs::remove_all(out);
}

TEST(CliProfile, CorruptedTruncatedOrWrongFilesAreOneLineErrors) {
  const std::string out = run_small("bad");
  const std::string good = out + "/profile.tvprof";
  std::string bytes = read_all(good);
  {
    std::ofstream(out + "/truncated.tvprof", std::ios::binary) << bytes.substr(0, bytes.size() / 3);
    bytes[bytes.size() - 7] ^= 0x10;
    std::ofstream(out + "/flipped.tvprof", std::ios::binary) << bytes;
    std::ofstream(out + "/text.tvprof") << "hello";
  }
  for (const std::string f : {"truncated.tvprof", "flipped.tvprof", "text.tvprof", "model.tvpkg", "missing.tvprof"}) {
    const auto r = run_tilevit("profile query " + out + "/" + f);
    EXPECT_EQ(r.exit_code, 3) << f << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
  }
  EXPECT_NE(run_tilevit("profile query " + out + "/model.tvpkg").err.find("is a package, not a profile"), std::string::npos);
  EXPECT_EQ(run_tilevit("profile query " + good + " --group-by colour").exit_code, 2);
  EXPECT_EQ(run_tilevit("run --preset small --profile-granularity fine --out " + out).exit_code, 2);
  EXPECT_EQ(run_tilevit("run --preset small --profile-iterations some --out " + out).exit_code, 2);
  fs::remove_all(out);
}

TEST(CliProfile, NoProfileBuildWritesNoProfileButTheMemoryMap) {
  const std::string out = run_small("noprof", "--no-profile");
  EXPECT_FALSE(fs::exists(out + "/profile.tvprof"));
  EXPECT_FALSE(fs::exists(out + "/model.html"));
  EXPECT_TRUE(fs::exists(out + "/memory.html"));
  fs::remove_all(out);
}

TEST(CliProfile, ProfilingFlagsCannotChangeAPackage) {
  const std::string out = run_small("flags");
  const std::string pkg = out + "/model.tvpkg";
  const auto r = run_tilevit("run --package " + pkg + " --profile-granularity kernel --out " + out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("built with --profile-granularity phase"), std::string::npos) << r.err;
  EXPECT_EQ(run_tilevit("run --package " + pkg + " --profile-granularity bogus --out " + out).exit_code, 2);
  EXPECT_EQ(run_tilevit("run --package " + pkg + " --no-profile --out " + out).exit_code, 2);
  // The same options as the package's are fine.
  EXPECT_EQ(run_tilevit("run --package " + pkg + " --no-reference --inferences 1 --profile-granularity phase --out " + out)
                .exit_code,
            0);
  fs::remove_all(out);
}

TEST(CliProfile, RunReportsCalibrationCoverage) {
  const std::string out = out_dir("coverage");
  fs::create_directories(out + "-machine");
  const std::string machine = calibrated_test16(out + "-machine");
  const auto r = run_tilevit("run --preset small --machine " + machine + " --inferences 1 --no-reference --no-profile --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel cycles: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention_combine "), std::string::npos) << r.out;
  const auto report = nlohmann::json::parse(read_all(out + "/run.json"));
  const auto& c = report["kernel_calibration"];
  EXPECT_GT(c["compute_cycles"].get<std::uint64_t>(), c["uncalibrated_cycles"].get<std::uint64_t>());
  EXPECT_GT(c["uncalibrated_cycles"].get<std::uint64_t>(), 0u);
  EXPECT_LT(c["calibrated_share"].get<double>(), 1.0);
  const auto inspect = nlohmann::json::parse(run_tilevit("inspect " + out + "/model.tvpkg --json").out);
  EXPECT_EQ(inspect["kernel_calibration"], c);
  fs::remove_all(out);
  fs::remove_all(out + "-machine");
}

// test16.machine names no kernel generation: nothing on it is calibrated, and run says so.
TEST(CliProfile, NoGenerationReadsZeroPercentCalibrated) {
  const std::string out = out_dir("no_generation");
  const auto r = run_tilevit("run --preset small --machine " + kMachine + " --inferences 1 --no-reference --no-profile --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel cycles: 0.0% calibrated of "), std::string::npos) << r.out;
  const auto c = nlohmann::json::parse(read_all(out + "/run.json"))["kernel_calibration"];
  EXPECT_EQ(c["calibrated_cycles"], 0);
  EXPECT_EQ(c["uncalibrated_cycles"], c["compute_cycles"]);
  EXPECT_EQ(c["calibrated_share"], 0.0);
  fs::remove_all(out);
}

TEST(CliProfile, QueryGivesTheCalibratedShareOverallAndPerRow) {
  const std::string machine_dir = out_dir("query_calibration_machine");
  fs::create_directories(machine_dir);
  const std::string out = out_dir("query_calibration");
  const auto r = run_tilevit("run --preset small --machine " + calibrated_test16(machine_dir) +
                             " --inferences 1 --no-reference --profile-granularity kernel --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto q = run_tilevit("profile query " + out + "/profile.tvprof --group-by kernel --json");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const auto j = nlohmann::json::parse(q.out);
  const auto& c = j["kernel_calibration"];
  const auto compute = c["compute_tile_cycles"].get<std::uint64_t>(), uncalibrated = c["uncalibrated_tile_cycles"].get<std::uint64_t>();
  EXPECT_GT(uncalibrated, 0u);
  EXPECT_DOUBLE_EQ(c["calibrated_share"].get<double>(), 1.0 - double(uncalibrated) / double(compute));
  bool combine = false;
  for (const auto& row : j["rows"]) {
    if (row["key"] == "attention_combine") {
      combine = true;
      EXPECT_EQ(row["calibrated_share"], 0.0);
      EXPECT_EQ(row["uncalibrated_cycles"], row["compute_cycles"]);
    }
    if (row["key"] == "gemm_fp8") {
      EXPECT_EQ(row["calibrated_share"], 1.0);
    } else if (row["key"] == "(sync)") {
      EXPECT_TRUE(row["calibrated_share"].is_null());
    }
  }
  EXPECT_TRUE(combine);
  const auto text = run_tilevit("profile query " + out + "/profile.tvprof --group-by kernel");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("compute tile-cycles: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("calibrated of "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("calibrated\n"), std::string::npos) << "the column header: " << text.out;
  // The attention_combine row reads 0.0% calibrated, the GEMM rows 100.0%.
  const auto line_of = [&](const std::string& key) { return text.out.substr(text.out.find("\n" + key + " ") + 1, 120); };
  EXPECT_NE(line_of("attention_combine").find(" 0.0%\n"), std::string::npos) << text.out;
  EXPECT_NE(line_of("gemm_fp8").find(" 100.0%\n"), std::string::npos) << text.out;
  fs::remove_all(out);
  fs::remove_all(machine_dir);
}

// `run --compare-with` and `profile compare` (issue 32, item 1): the main job's shape on a
// tiny model, searched against its --optimization-steps 0 run. The step table's total
// difference is the difference of the two runs' cycles.
TEST(CliProfile, CompareTheSearchedRunWithTheHeuristicOne) {
  const std::string heuristic = run_small("cmp_heuristic", "--optimization-steps 0");
  const std::string searched = run_small("cmp_searched", "--compare-with " + heuristic + "/profile.tvprof");
  ASSERT_TRUE(fs::exists(searched + "/compare.html"));
  const auto report = nlohmann::json::parse(read_all(searched + "/run.json"));
  EXPECT_TRUE(report["outputs"].contains("compare.html"));
  auto cycles = [](const std::string& dir) {
    return nlohmann::json::parse(read_all(dir + "/run.json"))["calls"][0]["device_cycles"].get<std::int64_t>();
  };
  const auto r = run_tilevit("profile compare " + heuristic + "/profile.tvprof " + searched + "/profile.tvprof -o " +
                             searched + "/again.html --json --limit 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"]["total_delta"].get<std::int64_t>(), cycles(searched) - cycles(heuristic));
  EXPECT_EQ(j["steps"]["total_a"].get<std::int64_t>(), cycles(heuristic));
  EXPECT_LE(j["steps"]["rows"].size(), 3u);
  EXPECT_FALSE(j["differences"].empty());  // another package and plan
  EXPECT_TRUE(j["sides"]["b"].contains("memory_peak"));
  EXPECT_GT(fs::file_size(searched + "/again.html"), 0u);
  const auto text = run_tilevit("profile compare " + heuristic + "/profile.tvprof " + searched + "/profile.tvprof -o " +
                                searched + "/again.html");
  EXPECT_NE(text.out.find("steps by cycle difference"), std::string::npos);
  EXPECT_NE(run_tilevit("profile compare --help").out.find("Examples:"), std::string::npos);
  // One-line errors: no output (2), a bad file (3), --compare-with without a profile (2) or a bad one (3).
  EXPECT_EQ(run_tilevit("profile compare " + heuristic + "/profile.tvprof " + searched + "/profile.tvprof").exit_code, 2);
  EXPECT_EQ(run_tilevit("profile compare " + heuristic + "/run.json " + searched + "/profile.tvprof -o x.html").exit_code, 3);
  const std::string bad = out_dir("cmp_bad");
  EXPECT_EQ(run_tilevit("run --preset small --machine " + kMachine + " --no-profile --compare-with " + heuristic +
                        "/profile.tvprof --out " + bad).exit_code, 2);
  EXPECT_EQ(run_tilevit("run --preset small --machine " + kMachine + " --compare-with " + heuristic + "/run.json --out " + bad)
                .exit_code, 3);
}

namespace {

// profile query --json: the lower bound and achieved/bound per operation and per step; the
// achieved cycles sum to the call's.
void expect_bounds_per_operation_and_step(const std::string& profile) {
  const auto r = run_tilevit("profile query " + profile + " --group-by operation --json --limit 500");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& b = j["bounds"];
  ASSERT_TRUE(b["available"].get<bool>());
  EXPECT_EQ(b["steps"]["achieved_sum"], b["steps"]["span_cycles"]);
  EXPECT_EQ(b["steps"]["achieved_sum"].get<std::uint64_t>(), j["span_cycles"].get<std::uint64_t>());
  EXPECT_EQ(b["operations"]["achieved_sum"], b["operations"]["compute_tile_cycles"]);
  EXPECT_GT(b["call"]["achieved_over_bound"].get<double>(), 1.0);
  std::uint64_t compute = 0, bounded = 0, bounded_steps = 0;
  for (const auto& row : j["rows"]) {
    compute += row["compute_cycles"].get<std::uint64_t>();
    if (!row.contains("achieved_over_bound")) continue;
    ++bounded;
    EXPECT_GE(row["achieved_over_bound"].get<double>(), 1.0) << row["key"];
  }
  for (const auto& row : b["steps"]["rows"]) bounded_steps += !row["achieved_over_bound"].is_null();
  EXPECT_EQ(compute, b["operations"]["compute_tile_cycles"].get<std::uint64_t>());
  EXPECT_GT(bounded, 0u);
  EXPECT_GT(bounded_steps, 0u);
  EXPECT_NE(run_tilevit("profile query " + profile).out.find("lower bound of the call"), std::string::npos);
}

}  // namespace

// Issue 32, item 2, on one chip.
TEST(CliProfile, QueryGivesBoundsPerOperationAndStep) {
  expect_bounds_per_operation_and_step(run_small("bounds") + "/profile.tvprof");
}

// The same on a pipeline over two chips, each chip's operations bounded by its own stage, one
// of each chip's two layers in detail (the other extrapolated); model.html shows the bounds
// and names the rows by chip.
TEST(CliProfile, QueryGivesBoundsPerOperationAndStepOnSeveralChips) {
  const std::string out = out_dir("bounds_x2");
  const auto r = run_tilevit("run --preset siglip2-tiny --machine test16x2 --batch 1 --micro-batches 2 --inferences 1 "
                             "--no-reference --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_bounds_per_operation_and_step(out + "/profile.tvprof");
  const std::string page = read_all(out + "/model.html");
  EXPECT_NE(page.find("\"bounds\":{\"call\""), std::string::npos);
  EXPECT_NE(page.find("\"rows_text\":\"32 tiles on 2 chips (16 + 16), 1 link row\""), std::string::npos);
  const auto text = run_tilevit("profile query " + out + "/profile.tvprof --group-by tile --limit 1").out;
  EXPECT_NE(text.find("32 tiles on 2 chips (16 + 16), 1 link row"), std::string::npos) << text;
  EXPECT_NE(text.find("chip 0's loop iterations 2..2 of 2 extrapolated"), std::string::npos) << text;
  EXPECT_NE(text.find("\nchip "), std::string::npos) << text;  // rows named by chip
}

// memory.json's per-step live bytes peak at exactly the bytes `memory-map` reports for the
// fullest tile (issue 32, item 3), on a tiny model.
TEST(CliProfile, MemoryOverTimePeaksAtTheFullestTile) {
  const std::string out = run_small("memory_time");
  const auto r = run_tilevit("memory-map " + out + "/model.tvpkg --out " + out + "/map --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto reported = nlohmann::json::parse(r.out);
  const auto map = nlohmann::json::parse(read_all(out + "/map/memory.json"));
  std::uint64_t most = 0;
  for (const auto& step : map["over_time"]["fullest"]) {
    std::uint64_t live = 0;
    for (const auto& v : step) live += v.get<std::uint64_t>();
    most = std::max(most, live);
  }
  EXPECT_EQ(most, reported["fullest_tile"]["peak_bytes"].get<std::uint64_t>());
  EXPECT_EQ(map["over_time"]["fullest_tile"], reported["fullest_tile"]["tile"]);
  EXPECT_EQ(reported["peak_step"]["bytes"], reported["fullest_tile"]["peak_bytes"]);
  EXPECT_EQ(read_all(out + "/map/memory.json"), read_all(out + "/memory.json"));  // run writes the same map
}

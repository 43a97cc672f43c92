// Evaluating points and running them into a sweep directory (src/sweep/evaluate.hpp,
// sweep_dir.hpp): records, failures, skip on rerun, the worker count.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/error.hpp"
#include "sweep_fixture.hpp"

namespace tilevit::sweep {
namespace {

std::vector<std::uint64_t> all(const SweepDirectory& d) { return strided_indices(d.point_count(), 0, 1); }

TEST(SweepEvaluate, ASmallPointCompilesWithItsFigures) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("eval"));
  const nlohmann::json r = evaluate_point(d.spec(), d.base(), d.point(3), {});  // batch 1, 624 KiB, 2 GHz
  ASSERT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(r["batch"], 1);
  EXPECT_EQ(r["tiles"], 16);
  EXPECT_EQ(r["machine"], "test16 sram_size=638976 clock_hz=2000000000");
  const double cycles = r["estimated_cycles"].get<double>();
  EXPECT_GT(cycles, 0);
  EXPECT_DOUBLE_EQ(r["latency_s"].get<double>(), cycles / 2e9);
  EXPECT_DOUBLE_EQ(r["throughput_images_per_s"].get<double>(), 1 / r["latency_s"].get<double>());
  EXPECT_GT(r["peak_sram_tile_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_GE(r["peak_sram_total_bytes"].get<std::uint64_t>(), r["peak_sram_tile_bytes"].get<std::uint64_t>());
  EXPECT_EQ(r["gemm_tile_bytes_cap"], 0u) << "the small model fits with the fastest grids";
  EXPECT_LE(r["peak_sram_total_bytes"].get<std::uint64_t>(), 16u * 638976u);
  EXPECT_EQ(r["calibrated_share"], 0.0) << "test16 names no kernel generation";
  EXPECT_GE(r["compile_seconds"].get<double>(), 0);
  // The same point at 1 GHz: the same cycles, twice the latency.
  const nlohmann::json slow = evaluate_point(d.spec(), d.base(), d.point(2), {});
  EXPECT_EQ(slow["estimated_cycles"], r["estimated_cycles"]);
  EXPECT_DOUBLE_EQ(slow["latency_s"].get<double>(), 2 * r["latency_s"].get<double>());
}

TEST(SweepEvaluate, APointThatDoesNotFitIsRecordedNotThrown) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("eval_fail"));
  const nlohmann::json r = evaluate_point(d.spec(), d.base(), d.point(4), {});  // batch 2 on 160 KiB
  ASSERT_EQ(r["status"], "failed") << r.dump();
  EXPECT_EQ(r["error"]["exit_code"], kExitBadInput);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("does not fit test16 sram_size=163840"), std::string::npos)
      << r["error"]["message"];
  EXPECT_FALSE(r.contains("estimated_cycles"));
}

TEST(SweepDirectory, AnotherSpecIsRefusedAndTheSameSpecReopens) {
  const std::string dir = test::fresh_dir("dir_other");
  const SweepDirectory d = test::small_sweep(dir);
  EXPECT_EQ(test::small_sweep(dir).point_count(), d.point_count()) << "the same spec again: a rerun";
  try {
    test::small_sweep(dir, R"({"tilevit_sweep": 1, "machine": "test16", "axes": {"batch": [1]}})");
    ADD_FAILURE() << "another spec was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find(dir + ": holds another sweep spec's points"), std::string::npos) << e.what();
  }
  EXPECT_EQ(SweepDirectory::open(dir).point_count(), 8u) << "spec.json is the first spec's";
}

TEST(SweepEvaluate, ADeviceRunChecksTheEmbeddingAgainstFp32) {
  const SweepDirectory d = test::small_sweep(
      test::fresh_dir("eval_device"),
      R"({"tilevit_sweep": 1, "machine": "test16", "device_run": true, "axes": {"preset": ["small"], "layers": [1]}})");
  const nlohmann::json r = evaluate_point(d.spec(), d.base(), d.point(0), {});
  ASSERT_EQ(r["status"], "ok") << r.dump();
  EXPECT_GT(r["device"]["min_cosine"].get<double>(), 0.99);
  EXPECT_EQ(r["device"]["cycles"], r["estimated_cycles"]) << "the device model runs the cycles the compiler costed";
}

TEST(SweepRun, EveryPointGetsARecordAndARerunSkipsThem) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("run"));
  const RunSummary first = run_points(d, all(d), {});
  EXPECT_EQ(first.evaluated, 8u);
  EXPECT_EQ(first.skipped, 0u);
  EXPECT_EQ(first.failed, 4u) << "the small model does not fit 160 KiB tiles at either batch";
  for (std::uint64_t i = 0; i < 8; ++i) EXPECT_TRUE(d.finished(d.point(i))) << i;
  const auto before = std::filesystem::last_write_time(d.point_path(d.point(0)));
  const RunSummary again = run_points(d, all(d), {});
  EXPECT_EQ(again.evaluated, 0u);
  EXPECT_EQ(again.skipped, 8u);
  EXPECT_EQ(std::filesystem::last_write_time(d.point_path(d.point(0))), before);
  // --retry-failed evaluates the failures again, and only them.
  RunOptions retry;
  retry.retry_failed = true;
  EXPECT_EQ(run_points(d, all(d), retry).evaluated, first.failed);
}

TEST(SweepRun, ADamagedRecordIsEvaluatedAgain) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("run_damaged"));
  run_points(d, {3}, {});
  std::ofstream(d.point_path(d.point(3))) << "{\"id\": \"trunc";
  EXPECT_FALSE(d.finished(d.point(3)));
  EXPECT_EQ(run_points(d, {3}, {}).evaluated, 1u);
  EXPECT_TRUE(d.finished(d.point(3)));
}

TEST(SweepRun, RecordsDoNotDependOnTheWorkerCount) {
  const SweepDirectory one = test::small_sweep(test::fresh_dir("run_w1"));
  const SweepDirectory three = test::small_sweep(test::fresh_dir("run_w3"));
  run_points(one, all(one), {});
  RunOptions workers;
  workers.workers = 3;
  run_points(three, all(three), workers);
  for (std::uint64_t i = 0; i < one.point_count(); ++i)
    EXPECT_EQ(without_timings(*one.finished(one.point(i))), without_timings(*three.finished(three.point(i)))) << i;
}

TEST(SweepRun, ReopeningTheDirectoryGivesTheSamePoints) {
  const std::string dir = test::fresh_dir("run_open");
  const SweepDirectory d = test::small_sweep(dir);
  const SweepDirectory reopened = SweepDirectory::open(dir);
  EXPECT_EQ(reopened.point_count(), d.point_count());
  for (std::uint64_t i = 0; i < d.point_count(); ++i) EXPECT_EQ(reopened.point(i).id, d.point(i).id);
  EXPECT_THROW(SweepDirectory::open(dir + "/points"), Error);
}

TEST(SweepRun, StridedIndicesShareThePointsOut) {
  EXPECT_EQ(strided_indices(7, 1, 3), (std::vector<std::uint64_t>{1, 4}));
  EXPECT_EQ(strided_indices(7, 0, 3), (std::vector<std::uint64_t>{0, 3, 6}));
  EXPECT_TRUE(strided_indices(2, 2, 3).empty());
}

}  // namespace
}  // namespace tilevit::sweep

// Merging a sweep: Pareto front, CSV, JSON, chart (src/sweep/merge.hpp, chart.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "support/atomic_file.hpp"
#include "sweep/chart.hpp"
#include "sweep_fixture.hpp"

namespace tilevit::sweep {
namespace {

TEST(ParetoFront, KeepsExactlyTheNonDominatedPoints) {
  const std::vector<Objectives> p = {
      {1.0, 10, 100},  // 0: front (fastest)
      {2.0, 20, 100},  // 1: front (most throughput)
      {2.0, 10, 100},  // 2: dominated by 0 and 1
      {3.0, 5, 50},    // 3: front (least SRAM)
      {3.0, 5, 60},    // 4: dominated by 3
      {1.0, 10, 100},  // 5: equal to 0: both stay
  };
  EXPECT_EQ(pareto_front(p), (std::vector<std::size_t>{0, 1, 3, 5}));
  EXPECT_TRUE(pareto_front({}).empty());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SweepMerge, EveryPointIsARowInIndexOrderMissingOnesIncluded) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("merge"));
  run_points(d, {0, 1, 2, 3, 4, 5, 6}, {});  // point 7 never ran
  const MergedSweep m = merge_records(d);
  ASSERT_EQ(m.records.size(), 8u);
  EXPECT_EQ(m.missing, 1u);
  EXPECT_EQ(m.ok + m.failed + m.missing, 8u);
  EXPECT_EQ(m.records[7]["status"], "missing");
  EXPECT_GE(m.pareto, 1u);
  std::uint64_t marked = 0;
  for (std::size_t i = 0; i < m.records.size(); ++i) {
    EXPECT_EQ(m.records[i]["index"], i);
    marked += m.records[i]["pareto"].get<bool>();
    if (m.records[i]["pareto"]) {
      EXPECT_EQ(m.records[i]["status"], "ok");
    }
  }
  EXPECT_EQ(marked, m.pareto);

  const auto lines = lines_of(merged_csv(d.spec(), m));
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0].rfind("index,id,status,preset,batch,sram_size,clock_hz,machine,model,layers,tiles,", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[0].find(",batch,", 30), std::string::npos) << "a swept figure is one column";
  EXPECT_EQ(lines[8].rfind("7," + d.point(7).id + ",missing,small,2,638976,2000000000,", 0), 0u) << lines[8];
  const nlohmann::json j = merged_json(d.spec(), m);
  EXPECT_EQ(j["points"], 8);
  EXPECT_EQ(j["records"].size(), 8u);
  EXPECT_EQ(j["spec"], to_json(d.spec()));
}

TEST(SweepMerge, AnErrorWithCommasAndQuotesIsOneCsvField) {
  const SweepDirectory d = test::small_sweep(
      test::fresh_dir("merge_quote"), R"({"tilevit_sweep": 1, "machine": "test16", "axes": {"preset": ["small"]}})");
  nlohmann::json record = evaluate_point(d.spec(), d.base(), d.point(0), {});
  record["status"] = "failed";  // a failure whose message quotes a value with a comma (a preset typo is the spec's)
  record["error"] = {{"message", "unknown value \"a,\"b\"\" here"}, {"exit_code", 3}};
  d.write_record(d.point(0), record);
  const auto lines = lines_of(merged_csv(d.spec(), merge_records(d)));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find(R"(,"unknown value ""a,""b"""" here")"), std::string::npos) << lines[1];
}

TEST(SweepMerge, WritesTheFourOutputs) {
  const SweepDirectory d = test::small_sweep(test::fresh_dir("merge_files"));
  run_points(d, strided_indices(d.point_count(), 0, 1), {});
  const MergeOutputs out = write_merged(d, merge_records(d));
  const std::string png = read_text_file(out.png, 1 << 24);
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const ChartGeometry g = chart_geometry(chart_data(d.spec(), merge_records(d)));
  const auto be32 = [&](std::size_t at) {
    return (unsigned char)png[at] << 24 | (unsigned char)png[at + 1] << 16 | (unsigned char)png[at + 2] << 8 |
           (unsigned char)png[at + 3];
  };
  EXPECT_EQ(be32(16), g.width);
  EXPECT_EQ(be32(20), g.height);
  const std::string html = read_text_file(out.html, 1 << 24);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  const MergedSweep m = merge_records(d);
  std::size_t circles = 0, rings = 0;
  for (std::size_t at = 0; (at = html.find("<circle class=\"point", at)) != std::string::npos; ++at) ++circles;
  for (std::size_t at = 0; (at = html.find("<circle class=\"point pareto", at)) != std::string::npos; ++at) ++rings;
  EXPECT_EQ(circles, m.ok);
  EXPECT_EQ(rings, m.pareto);
  EXPECT_TRUE(std::filesystem::is_regular_file(out.csv));
  EXPECT_TRUE(std::filesystem::is_regular_file(out.json));
}

TEST(SweepChart, AxesStartAtZeroAndCoverEveryPoint) {
  ChartData data;
  data.points = {{0, "a", "", 12.0, 80.0, 10.0, true}, {1, "b", "", 3.0, 300.0, 40.0, false}};
  const ChartGeometry g = chart_geometry(data);
  EXPECT_GE(g.x_max, 12.0);
  EXPECT_GE(g.y_max, 300.0);
  EXPECT_EQ(g.x_of(0), g.left);
  EXPECT_EQ(g.y_of(0), g.height - g.bottom);
  EXPECT_LE(g.x_of(12.0), g.width - g.right);
  EXPECT_GE(g.y_of(300.0), g.top);
  EXPECT_EQ(g.bin_of(10.0), 0);
  EXPECT_EQ(g.bin_of(40.0), kSramBins - 1);
  EXPECT_EQ(short_number(40000), "40000");
  EXPECT_EQ(short_number(0.25), "0.25");
}

}  // namespace
}  // namespace tilevit::sweep

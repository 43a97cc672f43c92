// The dated kernel measurements (tests/fixtures/kernels.json, a copy of the shared
// reference): the reader refuses bad input naming entry and field, the catalog classifies
// entries and assigns generations, and the embedded machines' [costs] are the fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "target/calibration.hpp"
#include "target/cost_fit.hpp"
#include "target/machine.hpp"
#include "target/measurement_catalog.hpp"

namespace tilevit::target {
namespace {

const MeasurementCatalog& fixture() {
  static const MeasurementCatalog catalog = build_catalog(parse_kernel_measurements(
      read_text_file(std::string(TILEVIT_FIXTURES) + "/kernels.json", 4 << 20), "kernels.json"));
  return catalog;
}

std::string parse_error(const std::string& entry) {
  try {
    parse_kernel_measurements(R"({"measurements": [{"kernel": "add_f16", "keys": 8, "cycles": 3, "date": "2026-09-13"}, )" +
                                  entry + "]}",
                              "k.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(KernelMeasurements, RefusesBadInput) {
  EXPECT_EQ(parse_error(R"j({"kernel": "x", "rows": null, "cycles": 5, "date": "2026-09-13 (old)"})j"), "");
  EXPECT_EQ(parse_error(R"({"kernel": "x", "cycles": 5})"), "k.json: measurements[1].date: missing required field");
  EXPECT_EQ(parse_error(R"({"kernel": "x", "cycles": 5, "date": "13 Sept"})"),
            "k.json: measurements[1].date: expected a date YYYY-MM-DD, optionally \"/DD\" or \" (old)\", got \"13 Sept\"");
  EXPECT_EQ(parse_error(R"({"kernel": "x", "cycles": 5, "date": "2026-02-30"})").rfind("k.json: measurements[1].date:", 0), 0u);
  EXPECT_EQ(parse_error(R"({"kernel": "x", "rows": -1, "cycles": 5, "date": "2026-09-13"})"),
            "k.json: measurements[1].rows: expected an integer in [0, 4294967295] or null, got -1");
  EXPECT_EQ(parse_error(R"({"kernel": "x", "cycles": 0, "date": "2026-09-13"})"),
            "k.json: measurements[1].cycles: expected an integer in [1, 9007199254740992], got non-negative integer 0");
  EXPECT_EQ(parse_error(R"({"kernel": 3, "cycles": 5, "date": "2026-09-13"})"),
            "k.json: measurements[1].kernel: expected a string, got non-negative integer 3");
  EXPECT_EQ(parse_error(R"({"kernel": "x", "cycles": 5, "date": "2026-09-13", "colour": "red"})").rfind(
                "k.json: measurements[1].colour: unknown field", 0),
            0u);
  EXPECT_EQ(parse_error(R"({"kernel": "x", "cycles": 5, "date": "2026-09-13", "note": ")" + std::string(5000, 'a') + "\"}"),
            "k.json: measurements[1].note: string of 5000 bytes exceeds the limit of 4096");
  EXPECT_EQ(parse_error("[]"), "k.json: measurements[1]: expected an object, got array");
}

TEST(KernelMeasurements, Dates) {
  const auto two_days = parse_measurement_date("2026-09-07/08", "d");
  EXPECT_EQ(two_days.day, *parse_day("2026-09-08"));  // a two-day run counts at its last day
  EXPECT_FALSE(two_days.old);
  EXPECT_TRUE(parse_measurement_date("2026-09-13 (old)", "d").old);
  EXPECT_EQ(day_text(*parse_day("2026-09-11") - 1), "2026-09-10");
  EXPECT_EQ(day_text(*parse_day("2026-03-01") - 1), "2026-02-28");
}

const CatalogPoint* point_of(std::size_t index, bool from_note = false) {
  for (const auto& p : fixture().points)
    if (p.index == index && p.from_note == from_note) return &p;
  return nullptr;
}

TEST(MeasurementCatalog, EveryEntryIsClassifiedOnce) {
  const MeasurementCatalog& c = fixture();
  ASSERT_EQ(c.measurements.size(), 157u);
  std::set<std::size_t> seen;
  for (const auto& p : c.points)
    if (!p.from_note) EXPECT_TRUE(seen.insert(p.index).second) << p.index;
  for (const auto& n : c.not_modelled) {
    EXPECT_TRUE(seen.insert(n.index).second) << n.index;
    EXPECT_FALSE(n.reason.empty()) << n.index;
    EXPECT_NE(n.reason, "no matching tilevit kernel") << c.measurements[n.index].kernel;
  }
  EXPECT_EQ(seen.size(), 157u);
}

TEST(MeasurementCatalog, ClassifiesEntries) {
  const CatalogPoint* qkv = point_of(90);  // gemm_f8 fused QKV, R244/K128/C64, in-model shard
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->formula, Formula::gemm_fp8);
  EXPECT_EQ(qkv->dims, (std::vector<std::uint64_t>{244, 128, 64}));
  EXPECT_EQ(qkv->use, MeasurementUse::fitted);
  const CatalogPoint* split = point_of(10);  // split workers, isolated, 7 x 729
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->formula, Formula::softmax_split);
  const CatalogPoint* in_model = point_of(13);  // in-model max, no mode named
  ASSERT_NE(in_model, nullptr);
  EXPECT_EQ(in_model->use, MeasurementUse::held_out);
  EXPECT_TRUE(in_model->softmax_either_mode);
  const CatalogPoint* reduce = point_of(78);  // "physical elements=2624, partials=6"
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->dims, (std::vector<std::uint64_t>{2624, 6}));
  const CatalogPoint* before = point_of(47, true);  // add_f16 1152: "before 1,644"
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(before->cycles, 1644u);
  EXPECT_TRUE(before->date.old);
  const auto relay = std::find_if(fixture().not_modelled.begin(), fixture().not_modelled.end(),
                                  [](const NotModelled& n) { return n.index == 123; });
  ASSERT_NE(relay, fixture().not_modelled.end());
  EXPECT_EQ(relay->reason.rfind("strided relay", 0), 0u);
}

std::vector<std::size_t> indices(Formula f, const std::string& generation) {
  std::vector<std::size_t> out;
  for (const CatalogPoint* p : generation_points(fixture(), f, *parse_day(generation))) out.push_back(p->index);
  return out;
}

TEST(MeasurementCatalog, GenerationRule) {
  // 2026-09-11 holds the "2026-09-13 (old)" GEMM shards: the kernels before that day's change.
  EXPECT_EQ(indices(Formula::gemm_fp8, "2026-09-11"), (std::vector<std::size_t>{89, 91, 93, 95, 99}));
  EXPECT_EQ(indices(Formula::gemm_fp8, "2026-09-13"), (std::vector<std::size_t>{90, 92, 94, 96, 100, 111}));
  EXPECT_EQ(indices(Formula::softmax_split, "2026-09-11"), (std::vector<std::size_t>{10, 11, 13, 16}));
  // 2026-09-13 changed the split softmax without a measurement after the change.
  EXPECT_TRUE(indices(Formula::softmax_split, "2026-09-13").empty() ||
              indices(Formula::softmax_split, "2026-09-13") == (std::vector<std::size_t>{17}));
  EXPECT_EQ(older_generation(fixture(), Formula::softmax_split, *parse_day("2026-09-13")), *parse_day("2026-09-12"));
}

TEST(CostFit, EmbeddedMachinesAreTheFitOfKernelsJson) {
  EXPECT_EQ(embedded_catalog().measurements.size(), fixture().measurements.size());
  for (const MachineDescription* m : {&c600(), &c600_2026_09_13()}) {
    const GenerationFit fit = fit_generation(fixture(), m->costs.generation);
    EXPECT_EQ(apply_fit(m->costs, fit), m->costs) << m->costs.generation << "\n" << costs_section_text(m->costs, fit);
  }
  EXPECT_EQ(c600().costs.generation, "2026-09-11");
  EXPECT_EQ(c600_2026_09_13().costs.generation, "2026-09-13");
}

TEST(CostFit, FittedPointsAndSoftmaxWithinBounds) {
  const CatalogReport report = check_catalog(c600(), fixture());
  for (const auto& kind : report.kinds)
    for (const auto& p : kind.points) {
      if (p.point->use == MeasurementUse::fitted) EXPECT_LE(std::abs(p.error_percent), 1.0) << kind.kind << " " << p.point->index;
      // Acceptance: softmax within 5% on every isolated measured shape of the generation.
      if (kind.kind.starts_with("softmax_")) EXPECT_LE(std::abs(p.error_percent), 5.0) << p.point->index;
    }
}

TEST(CostFit, BadGenerationIsAUsageError) {
  try {
    fit_generation(fixture(), "yesterday");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
  EXPECT_THROW(fit_generation(fixture(), "2020-01-01"), Error);  // before every measurement
}

TEST(KernelCalibrated, FollowsTheGenerationsPoints) {
  for (Kernel k : all_kernels()) {
    EXPECT_EQ(kernel_calibrated(c600(), k), k != Kernel::copy) << to_string(k);
    EXPECT_FALSE(kernel_calibrated(test16(), k)) << to_string(k);  // names no generation
  }
  const MachineDescription& late = c600_2026_09_13();
  EXPECT_TRUE(formula_calibrated(late, Formula::gemm_fp8));
  EXPECT_TRUE(formula_calibrated(late, Formula::softmax_whole));
  EXPECT_FALSE(formula_calibrated(late, Formula::softmax_split));  // changed that day, not measured after
  EXPECT_FALSE(formula_calibrated(late, Formula::reduce_add));     // only in-model maxima that day
}

}  // namespace
}  // namespace tilevit::target

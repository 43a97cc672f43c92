// Kernel cost model: the formulas (panels, worker split, softmax modes), monotone in every
// dim, and the older calibration.json reader refuses bad input naming the entry and field.
// The fit to kernels.json: test_measurement_catalog.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "support/error.hpp"
#include "target/calibration.hpp"
#include "target/kernel_costs.hpp"
#include "target/machine.hpp"

namespace tilevit::target {
namespace {

const std::string kCalibration = std::string(TILEVIT_FIXTURES) + "/calibration.json";

TEST(KernelCosts, OlderCalibrationFormatStillReads) {
  // The 20-point file predates the dated measurements; it is compared, not fitted.
  const auto measurements = load_calibration(kCalibration);
  ASSERT_EQ(measurements.size(), 20u);
  EXPECT_EQ(check_costs(c600(), measurements).entries.size(), 20u);
}

TEST(KernelCosts, GemmIsThePanelFormula) {
  // base + ceil(K / panel_inner) * ceil(C / panel_columns) * (per_row * R + per_panel)
  const GemmCoefficients& g = c600().costs.gemm_fp16;
  auto formula = [&](double panels, double rows) {
    return static_cast<std::uint64_t>(std::ceil(g.base + panels * (g.per_row * rows + g.per_panel) - 1e-6));
  };
  EXPECT_EQ(gemm_cycles(c600(), Precision::fp16, 81, 80, 80), formula(25, 81));
  EXPECT_EQ(gemm_cycles(c600(), Precision::fp16, 1, 17, 1), formula(2, 1));  // partial panels count whole
  // FP8 panels are twice as deep: the same shape costs fewer panels.
  EXPECT_LT(gemm_cycles(c600(), Precision::fp8, 184, 288, 48), gemm_cycles(c600(), Precision::fp16, 184, 288, 48));
}

TEST(KernelCosts, SoftmaxModes) {
  // 7-8 rows x 729 keys (the main job's 11,664 rows over 1,472 tiles): split rows, as the
  // original ran it: 20,226 / 20,244 measured; whole rows 25,350.
  EXPECT_EQ(softmax_mode(c600(), 8, 729), SoftmaxMode::split_rows);
  EXPECT_EQ(softmax_cycles(c600(), 8, 729), 20245u);
  const std::uint64_t dims[] = {8, 729};
  EXPECT_EQ(formula_cycles(c600(), Formula::softmax_whole, dims), 25350u);
  // Split mode deals 3 segments per row to 6 workers: 7 and 8 rows both give 4 per worker.
  EXPECT_EQ(softmax_cycles(c600(), 7, 729) + 18, softmax_cycles(c600(), 8, 729));
  // Many short rows: whole rows beat 3 segments each plus the per-row merges.
  EXPECT_EQ(softmax_mode(c600(), 60, 96), SoftmaxMode::whole_rows);
  for (std::uint64_t rows : {1, 5, 8, 17})
    for (std::uint64_t keys : {16, 128, 729, 2000}) {
      const std::uint64_t d[] = {rows, keys};
      const Formula chosen = softmax_formula(softmax_mode(c600(), rows, keys));
      EXPECT_EQ(softmax_cycles(c600(), rows, keys), formula_cycles(c600(), chosen, d));
      EXPECT_LE(softmax_cycles(c600(), rows, keys), formula_cycles(c600(), Formula::softmax_whole, d));
      EXPECT_LE(softmax_cycles(c600(), rows, keys), formula_cycles(c600(), Formula::softmax_split, d));
    }
}

TEST(KernelCosts, WorkerSplit) {
  // 6 workers, grains of 16: GELU's plateau 16..96 and softmax's 729 -> 768 padding.
  EXPECT_EQ(busiest_worker_elements(2, 6, 16), 2u);
  EXPECT_EQ(busiest_worker_elements(16, 6, 16), 16u);
  EXPECT_EQ(busiest_worker_elements(96, 6, 16), 16u);
  EXPECT_EQ(busiest_worker_elements(98, 6, 16), 18u);
  EXPECT_EQ(busiest_worker_elements(2208, 6, 16), 368u);
  EXPECT_EQ(busiest_worker_elements(729, 6, 16), busiest_worker_elements(768, 6, 16));
  EXPECT_EQ(gelu_cycles(c600(), 16), gelu_cycles(c600(), 96));
  EXPECT_LT(gelu_cycles(c600(), 96), gelu_cycles(c600(), 98));
  EXPECT_EQ(softmax_cycles(c600(), 1, 729), softmax_cycles(c600(), 1, 768));  // "768 padded"
  for (std::uint64_t n = 0; n < 5000; ++n)
    ASSERT_LE(busiest_worker_elements(n, 6, 16), busiest_worker_elements(n + 1, 6, 16)) << n;
}

TEST(KernelCosts, CopyIsBasePlusEightBytesPerCycle) {
  EXPECT_EQ(copy_cycles(c600(), 0), 288u);
  EXPECT_EQ(copy_cycles(c600(), 8000), 1288u);
  EXPECT_EQ(copy_cycles(c600(), 8001), 1289u);
}

// Every kernel, every dim: raising one extent never lowers the prediction.
TEST(KernelCosts, MonotoneInEveryDim) {
  const std::vector<std::uint64_t> bases = {0, 1, 7, 16, 97, 300};
  for (Kernel kernel : all_kernels())
    for (Precision precision : {Precision::fp16, Precision::fp8}) {
      if (kernel != Kernel::gemm && precision == Precision::fp8) continue;
      const std::size_t dims = dim_names(kernel).size();
      for (std::size_t d = 0; d < dims; ++d)
        for (std::uint64_t base : bases) {
          KernelCall call{kernel, precision, std::vector<std::uint64_t>(dims, base)};
          std::uint64_t previous = 0;
          for (std::uint64_t v = 0; v <= 2500; v += (v < 300 ? 1 : 37)) {
            call.dims[d] = v;
            const std::uint64_t cycles = predict_cycles(c600(), call);
            ASSERT_GE(cycles, previous) << describe(call);
            previous = cycles;
          }
        }
    }
}

TEST(KernelCosts, GrowsWithWork) {
  // Not flat either: bigger work costs strictly more at scale.
  EXPECT_LT(layernorm_cycles(c600(), 1, 1152), layernorm_cycles(c600(), 2, 1152));
  EXPECT_LT(reduce_add_cycles(c600(), 1472, 2), reduce_add_cycles(c600(), 1472, 3));
  EXPECT_LT(add_cycles(c600(), 1152), add_cycles(c600(), 2304));
  EXPECT_LT(cast_fp16_fp8_cycles(c600(), 8320), cast_fp16_fp8_cycles(c600(), 16640));
  EXPECT_LT(gemm_cycles(c600(), Precision::fp8, 82, 192, 160), gemm_cycles(c600(), Precision::fp8, 83, 192, 160));
}

std::string calibration_error(const std::string& json) {
  try {
    parse_calibration(json, "cal.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(Calibration, RefusesBadInput) {
  const std::string ok = R"({"kernel": "add", "elements": 8, "cycles": 300})";
  auto doc = [&](const std::string& entry) { return R"({"measurements": [)" + ok + ", " + entry + "]}"; };
  EXPECT_EQ(calibration_error(doc(ok)), "");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "conv", "elements": 8, "cycles": 300})")).rfind(
                "cal.json: measurements[1].kernel: unknown kernel \"conv\"", 0),
            0u);
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "gemm", "precision": "fp4", "rows": 1, "inner": 1, "columns": 1,
                                     "cycles": 3})"))
                .rfind("cal.json: measurements[1].precision: unknown precision \"fp4\"", 0),
            0u);
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "gemm", "rows": 1, "inner": 1, "columns": 1, "cycles": 3})")),
            "cal.json: measurements[1].precision: missing required field");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "softmax", "rows": 1, "cycles": 3})")),
            "cal.json: measurements[1].keys: missing required field");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "add", "elements": -4, "cycles": 3})")),
            "cal.json: measurements[1].elements: expected an integer in [0, 4294967295], got -4");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "add", "elements": "8", "cycles": 3})")),
            "cal.json: measurements[1].elements: expected an integer in [0, 4294967295], got string");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "add", "elements": 8.5, "cycles": 3})")),
            "cal.json: measurements[1].elements: expected an integer in [0, 4294967295], got number 8.5");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "add", "elements": 8, "cycles": 0})")),
            "cal.json: measurements[1].cycles: expected an integer in [1, 9007199254740992], got non-negative integer 0");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": "add", "elements": 8, "rows": 2, "cycles": 3})")),
            "cal.json: measurements[1].rows: unknown field for kernel add");
  EXPECT_EQ(calibration_error(doc(R"({"kernel": 7, "elements": 8, "cycles": 3})")),
            "cal.json: measurements[1].kernel: expected a string, got non-negative integer 7");
  EXPECT_EQ(calibration_error(doc("[]")), "cal.json: measurements[1]: expected an object, got array");
  EXPECT_EQ(calibration_error("{\"measurements\": 5}"), "cal.json: measurements: expected an array, got non-negative integer 5");
  EXPECT_EQ(calibration_error("{}"), "cal.json: measurements: missing required field");
  EXPECT_EQ(calibration_error("{\"measurements\": [], \"extra\": 1}").rfind("cal.json: extra: unknown field", 0), 0u);
  EXPECT_EQ(calibration_error("{\"measurements\": [").rfind("cal.json: not valid JSON", 0), 0u);
  EXPECT_EQ(calibration_error("[1]"), "cal.json: expected a JSON object at the top level, got array");
}

// Fuzz findings: a number no double holds was an internal error (exit 70), and a dim of
// 2^64-1 was accepted and cast to a wrong estimate.
TEST(Calibration, RefusesNumbersOutOfRange) {
  EXPECT_EQ(calibration_error("1e991").rfind("cal.json: a number is out of range", 0), 0u);
  EXPECT_EQ(calibration_error(R"({"measurements": [{"kernel": "add", "elements": 1e999, "cycles": 3}]})")
                .rfind("cal.json: a number is out of range", 0),
            0u);
  EXPECT_EQ(calibration_error(R"({"measurements": [{"kernel": "gemm", "precision": "fp16", "rows": 18446744073709551615,
                                                    "inner": 1, "columns": 1, "cycles": 1}]})"),
            "cal.json: measurements[0].rows: expected an integer in [0, 4294967295], got non-negative integer "
            "18446744073709551615");
}

TEST(KernelCosts, EstimateBeyond64BitsIsAnInputError) {
  KernelCall huge{Kernel::gemm, Precision::fp16, {UINT32_MAX, UINT32_MAX, UINT32_MAX}};
  try {
    predict_cycles(c600(), huge);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

TEST(Calibration, EmptyListReportsZero) {
  const auto report = check_costs(c600(), parse_calibration(R"({"measurements": []})", "x"));
  EXPECT_TRUE(report.entries.empty());
  EXPECT_EQ(report.median_abs_error_percent, 0.0);
}

// The reference copy of calibration.json explains its corrected softmax point in a "note".
TEST(Calibration, AcceptsATextNote) {
  const auto entries = parse_calibration(
      R"({"measurements": [{"kernel": "add", "elements": 8, "cycles": 300, "note": "isolated call"}]})", "x");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].cycles, 300u);
  EXPECT_EQ(calibration_error(R"({"measurements": [{"kernel": "add", "elements": 8, "cycles": 3, "note": 4}]})"),
            "cal.json: measurements[0].note: expected a string, got non-negative integer 4");
}

}  // namespace
}  // namespace tilevit::target

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <vector>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "formats/npy.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::run_tilevit;
namespace fs = std::filesystem;

namespace {
class ReferenceCli : public test_support::CliTest {
 protected:
  // Expects exit `code` and a single error line on stderr containing every `needle`.
  void expect_error(const std::string& args, int code, std::initializer_list<std::string> needles) {
    const auto r = run_tilevit(args);
    EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
    const std::string line = last_line(r.err);
    EXPECT_EQ(line.rfind("tilevit: error: ", 0), 0u) << line;
    for (const auto& n : needles) EXPECT_NE(line.find(n), std::string::npos) << "missing '" << n << "' in: " << line;
  }
  const std::string fixtures_ = TILEVIT_FIXTURES;
};
}  // namespace

// Issue 34, item 19: libgomp's idle workers spun for milliseconds after every parallel
// loop, so a small model on a loaded machine paid for the spinning, not for its work.
// The binary runs with OMP_WAIT_POLICY=passive (libgomp shows GOMP_SPINCOUNT 0) unless
// the user chose a policy.
TEST_F(ReferenceCli, IdleOpenMpWorkersSleepUnlessTheUserChoseAPolicy) {
  ::setenv("OMP_DISPLAY_ENV", "verbose", 1);
  const auto ours = run_tilevit("reference --preset small --layers 1 --threads 2 --fp32-only");
  ::setenv("OMP_WAIT_POLICY", "active", 1);
  const auto theirs = run_tilevit("reference --preset small --layers 1 --threads 2 --fp32-only");
  ::unsetenv("OMP_WAIT_POLICY");
  ::unsetenv("OMP_DISPLAY_ENV");
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  EXPECT_NE(ours.err.find("GOMP_SPINCOUNT = '0'"), std::string::npos) << ours.err;
  EXPECT_NE(ours.out.find("FP32 reference: "), std::string::npos) << ours.out;
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_NE(theirs.err.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << theirs.err;
}

TEST_F(ReferenceCli, SmallModelJsonReport) {
  const auto r = run_tilevit("reference --preset small --batch 2 --json --save-fp32 " + path("f.npy") +
                             " --save-device " + path("d.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"min_cosine", "cosines", "max_abs_error", "fp32_seconds", "device_numerics_seconds"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["cosines"].size(), 2u);
  EXPECT_GT(j["min_cosine"].get<double>(), 0.99);
  EXPECT_TRUE(j["passed"].get<bool>());
  const auto f = formats::read_npy(path("f.npy")), d = formats::read_npy(path("d.npy"));
  EXPECT_EQ(f.shape, (std::vector<std::int64_t>{2, 144}));
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{2, 144}));
  EXPECT_NE(r.err.find("FP32 reference"), std::string::npos);  // progress goes to stderr
}

TEST_F(ReferenceCli, ExportedWeightsGiveTheSameEmbeddings) {
  ASSERT_EQ(run_tilevit("export-weights " + path("w.safetensors") + " --preset small --seed 5").exit_code, 0);
  ASSERT_EQ(run_tilevit("reference --preset small --seed 5 --fp32-only --save-fp32 " + path("a.npy")).exit_code, 0);
  ASSERT_EQ(run_tilevit("reference --preset small --seed 5 --fp32-only --weights " + path("w.safetensors") +
                        " --save-fp32 " + path("b.npy"))
                .exit_code,
            0);
  EXPECT_EQ(formats::read_npy(path("a.npy")).data, formats::read_npy(path("b.npy")).data);
}

TEST_F(ReferenceCli, RealPhotoInputs) {
  const auto r = run_tilevit("reference --preset small --json --image " + fixtures_ + "/images/rocket.jpg --image " +
                             fixtures_ + "/images/astronaut.png");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["cosines"].size(), 2u);
}

TEST_F(ReferenceCli, OutOfRangeFlags) {
  expect_error("reference --preset small --fp8-scale 40", 2, {"--fp8-scale", "40"});
  expect_error("reference --preset small --fp8-scale -32", 2, {"--fp8-scale", "-32"});
  expect_error("reference --layers 28", 2, {"layers", "28"});
  expect_error("reference --layers 0", 2, {"layers", "0"});
  expect_error("reference --preset small --batch 0", 2, {"batch"});
  expect_error("reference --preset giant", 2, {"giant"});
  EXPECT_EQ(run_tilevit("reference --no-such-flag").exit_code, 2);
}

TEST_F(ReferenceCli, BadImages) {
  expect_error("reference --preset small --image " + path("missing.png"), 3, {path("missing.png")});
  expect_error("reference --preset small --image " + fixtures_ + "/images/bad/zero_width.png", 3, {"zero_width.png"});
  const std::string not_image = path("notes.png");
  std::ofstream(not_image) << "this is not an image";
  expect_error("reference --preset small --image " + not_image, 3, {not_image});
}

TEST_F(ReferenceCli, BadCheckpoints) {
  const std::string w = path("w.safetensors");
  ASSERT_EQ(run_tilevit("export-weights " + w + " --preset small").exit_code, 0);
  // A checkpoint of another shape: the first tensor that differs is named.
  expect_error("reference --layers 1 --weights " + w, 3, {w, "vision_model.", "has shape"});
  // Truncated file.
  const auto size = fs::file_size(w);
  fs::copy_file(w, path("cut.safetensors"));
  fs::resize_file(path("cut.safetensors"), size / 2);
  expect_error("reference --preset small --weights " + path("cut.safetensors"), 3, {path("cut.safetensors")});
  // Fewer layers than asked for: found from the checkpoint's names before any work.
  ASSERT_EQ(run_tilevit("export-weights " + path("one.safetensors") + " --layers 1").exit_code, 0);
  expect_error("reference --layers 2 --weights " + path("one.safetensors"), 3,
               {path("one.safetensors"), "holds 1 encoder layer, 2 asked"});
}

TEST_F(ReferenceCli, UnwritableOutputLeavesNothing) {
  expect_error("reference --preset small --fp32-only --save-fp32 " + path("no/such/dir/x.npy"), 4, {"x.npy"});
  EXPECT_FALSE(fs::exists(path("no")));
}

TEST_F(ReferenceCli, HelpOnEveryCommand) {
  for (const char* cmd : {"", "reference", "export-weights", "machine", "cost-check"}) {
    const auto r = run_tilevit(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd;
  }
}

// `run --time-reference` times an FP32 forward pass before every call and reports both
// medians and their ratio (the figure of issue 4's host-speed goal), per call and in all.
TEST_F(ReferenceCli, RunTimesTheReferenceNextToEveryCall) {
  const auto r = run_tilevit("run --preset small --inferences 3 --time-reference --no-profile --json --out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["calls"].size(), 3u);
  std::vector<double> reference;
  for (const auto& c : j["calls"]) {
    ASSERT_TRUE(c.contains("reference_ms"));
    EXPECT_GT(c["reference_ms"].get<double>(), 0.0);
    reference.push_back(c["reference_ms"].get<double>());
  }
  std::sort(reference.begin(), reference.end());
  EXPECT_DOUBLE_EQ(j["reference_ms_median"].get<double>(), reference[1]);
  EXPECT_NEAR(j["host_vs_reference"].get<double>(), j["host_ms_median"].get<double>() / reference[1], 1e-9);
  EXPECT_TRUE(j["passed"].get<bool>());
  // Without the flag: no timing fields.
  const auto plain = run_tilevit("run --preset small --inferences 1 --no-profile --json --out " + path("run2"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("host_vs_reference"));
}

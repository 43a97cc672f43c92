// --model DIR end to end: export-weights writes a checkpoint directory, reference reads
// it back to the preset's outputs; compile and run from it on the device model;
// --output-layer shapes.
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "formats/npy.hpp"

using namespace tilevit;
using test_support::CliTest;
using test_support::last_line;
using test_support::run_tilevit;

namespace {

class ModelDir : public CliTest {};

TEST_F(ModelDir, ReferenceFromAnExportedDirectoryMatchesThePreset) {
  for (const std::string preset : {"small", "clip-tiny", "dinov2-reg-tiny"}) {
    const std::string dir = path(preset);
    ASSERT_EQ(run_tilevit("export-weights " + dir + " --preset " + preset + " --seed 4 --shards 2").exit_code, 0);
    const auto a = run_tilevit("reference --fp32-only --seed 4 --model " + dir + " --save-fp32 " + path(preset + "_a.npy"));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const auto b = run_tilevit("reference --fp32-only --preset " + preset + " --seed 4 --save-fp32 " +
                               path(preset + "_b.npy"));
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(formats::read_npy(path(preset + "_a.npy")).data, formats::read_npy(path(preset + "_b.npy")).data)
        << preset;
  }
}

TEST_F(ModelDir, OutputLayerGivesEveryTokenOfThatLayer) {
  const auto r = run_tilevit("reference --fp32-only --preset clip-tiny --output-layer -2 --save-fp32 " + path("h.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(formats::read_npy(path("h.npy")).shape, (std::vector<std::int64_t>{1, 10, 128}));
  const auto bad = run_tilevit("reference --fp32-only --preset clip-tiny --output-layer 3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(last_line(bad.err).find("--output-layer 3: must be in [1, 2] or [-2, -1]"), std::string::npos) << bad.err;
}

// export-weights, then compile and run from the directory: the device's output equals the
// device-numerics reference of the same package bit for bit.
TEST_F(ModelDir, CompileAndRunFromAnExportedDirectory) {
  for (const std::string preset : {"clip-tiny", "dinov2-reg-tiny"}) {
    const std::string dir = path(preset), pkg = path(preset + ".tvpkg");
    ASSERT_EQ(run_tilevit("export-weights " + dir + " --preset " + preset + " --seed 4 --shards 2").exit_code, 0);
    const auto c = run_tilevit("compile --model " + dir + " --machine test16 --package " + pkg);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    const auto r = run_tilevit("run --package " + pkg + " --model " + dir + " --out " + path(preset + "_run"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto d = run_tilevit("reference --package " + pkg + " --model " + dir + " --save-device " + path(preset + "_d.npy"));
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const auto got = formats::read_npy(path(preset + "_run/embeddings.npy"));
    EXPECT_EQ(got.data, formats::read_npy(path(preset + "_d.npy")).data) << preset;
    EXPECT_EQ(got.shape.size(), 2u) << preset;  // pooled
  }
}

TEST_F(ModelDir, RunRefusesACheckpointOfAnotherFamily) {
  const std::string dir = path("clip");
  ASSERT_EQ(run_tilevit("export-weights " + dir + " --preset clip-tiny").exit_code, 0);
  ASSERT_EQ(run_tilevit("compile --preset small --package " + path("p.tvpkg")).exit_code, 0);
  const auto r = run_tilevit("run --package " + path("p.tvpkg") + " --model " + dir + " --out " + path("run"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(last_line(r.err).find("is a clip tower; the package was compiled for siglip"), std::string::npos) << r.err;
}

TEST_F(ModelDir, MissingFilesAreNamed) {
  const auto r = run_tilevit("reference --model " + path("nothing"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(last_line(r.err).find("not a checkpoint directory"), std::string::npos) << r.err;
  const std::string dir = path("vit");
  ASSERT_EQ(run_tilevit("export-weights " + dir + " --preset vit-tiny").exit_code, 0);
  std::filesystem::remove(dir + "/preprocessor_config.json");
  const auto m = run_tilevit("reference --model " + dir);
  EXPECT_EQ(m.exit_code, 3);
  EXPECT_NE(last_line(m.err).find("preprocessor_config.json: file"), std::string::npos) << m.err;
  const auto both = run_tilevit("reference --model " + dir + " --preset small");
  EXPECT_EQ(both.exit_code, 2);
}

// Issue 34, item 14: a preprocessor_config.json value the model cannot take is the
// file's error: exit 3, one line naming the file and the field.
TEST_F(ModelDir, PreprocessorConfigErrorsNameTheFileAndFieldAndExit3) {
  const std::string dir = path("small");
  ASSERT_EQ(run_tilevit("export-weights " + dir + " --preset small").exit_code, 0);
  const std::string file = dir + "/preprocessor_config.json";
  const nlohmann::json good = nlohmann::json::parse(test_support::read_all(file));
  const std::pair<const char*, nlohmann::json> cases[] = {{"size", 99}, {"image_std", 0}};
  for (const auto& [key, value] : cases) {
    nlohmann::json bad = good;
    bad[key] = value;
    std::ofstream(file) << bad.dump();
    const auto r = run_tilevit("reference --fp32-only --model " + dir);
    EXPECT_EQ(r.exit_code, 3) << key << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(file + ": " + key + ": "), std::string::npos) << r.err;
  }
}

}  // namespace

// One stage of a pipeline package read alone (what inspect, memory-map and verify --stage
// take): the stage's own package, verified like a one-chip package and checked against
// the system section; a stage out of range or in another stage's place is refused.
#include <gtest/gtest.h>

#include "package/program_codec.hpp"
#include "support/error.hpp"
#include "system/pipeline.hpp"
#include "system/pipeline_package.hpp"

using namespace tilevit;

namespace {

system::CompiledPipeline compile_tiny() {
  model::ViTConfig c = model::ViTConfig::preset("siglip2-tiny");
  c.batch = 1;
  return system::compile_pipeline(c, model::NumericsConfig::uniform(-4), target::test16x2(), {});
}

package::Container as_file(const system::CompiledPipeline& p) {
  return package::Container::from_bytes(system::encode_pipeline(p).bytes(), "p.tvpkg");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(PipelineStage, AStageAloneIsItsOwnPackageVerified) {
  const system::CompiledPipeline p = compile_tiny();
  const package::Container file = as_file(p);
  ASSERT_EQ(system::pipeline_stage_count(file), 2u);
  for (std::uint32_t s = 0; s < 2; ++s) {
    const package::VerifiedPackage stage = system::decode_pipeline_stage(file, s);
    EXPECT_EQ(package::encode_package(stage.contents).bytes(), package::encode_package(p.stages[s].executable).bytes());
    EXPECT_EQ(stage.sha256, system::stage_container(file, s).sha256_hex());
    EXPECT_NE(stage.sha256, file.sha256_hex());
  }
  EXPECT_EQ(error_of([&] { system::decode_pipeline_stage(file, 2); }), "p.tvpkg: no stage 2 in a pipeline of 2");
}

TEST(PipelineStage, AStageInAnotherStagesPlaceIsRefused) {
  const system::CompiledPipeline p = compile_tiny();
  const package::Container file = as_file(p);
  const compiler::Executable& first = p.stages[0].executable;
  EXPECT_NE(error_of([&] { system::check_pipeline_stage(file, 1, first); }).find("p.tvpkg: stage.1: layers 0 + "),
            std::string::npos);
  EXPECT_NO_THROW(system::check_pipeline(file, {p.stages[0].executable, p.stages[1].executable}));
  EXPECT_NE(error_of([&] { system::check_pipeline(file, {first, first}); }).find("stage.1"), std::string::npos);
}

TEST(PipelineStage, AStageThatFailsVerificationNamesItself) {
  system::CompiledPipeline p = compile_tiny();
  p.stages[1].executable.program.allocations.front().address = 0xfffffff0u;  // outside every region
  const package::Container file = as_file(p);
  EXPECT_NO_THROW(system::decode_pipeline_stage(file, 0));
  const std::string e = error_of([&] { system::decode_pipeline_stage(file, 1); });
  EXPECT_EQ(e.rfind("p.tvpkg: stage.1: not a valid package: ", 0), 0u) << e;
  EXPECT_EQ(error_of([&] { system::decode_pipeline(file); }), e);
}

}  // namespace

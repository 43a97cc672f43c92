// Pipeline plan files as `compile --plan` and `run --plan` read them on a machine of
// several chips: parse and check against SigLIP2-tiny (2 layers) on test16x2, then compile
// the pipeline with the plan's split and stage grids, as --plan does (a split or pin that
// cannot be placed is a clean rejection).
#include "compiler/plan_file.hpp"
#include "fuzz_support.hpp"
#include "system/pipeline_plan_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  if (size > compiler::kMaxPlanFileBytes) return 0;  // read_plan_text refuses larger files first
  fuzz::expect_clean([&] {
    static const model::ViTConfig config = [] {
      model::ViTConfig c = model::ViTConfig::preset("siglip2-tiny");
      c.layers = 2;
      return c;
    }();
    const auto& machine = target::test16x2();
    const std::vector<system::StagePlan> plans =
        system::parse_pipeline_plan_file(std::string(fuzz::as_text(data, size)), "fuzz.plan", config, machine);
    system::compile_pipeline(config, model::NumericsConfig::uniform(-4), machine, {}, {}, plans);
  });
  return 0;
}

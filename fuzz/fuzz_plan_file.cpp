// Plan files as `compile --plan` and `run --plan` read them: parse and check, write back
// (the text of a plan that parses must parse to the same plan), then compile the small
// model on the test machine with the plan's pins and W, as --plan does (a pin that cannot
// be placed is a clean rejection).
#include "compiler/compile.hpp"
#include "compiler/plan_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  if (size > compiler::kMaxPlanFileBytes) return 0;  // read_plan_file refuses larger files first
  fuzz::expect_clean([&] {
    const compiler::PlanFile plan = compiler::parse_plan_file(std::string(fuzz::as_text(data, size)), "fuzz.plan", 1u << 20);
    const compiler::PlanFile again = compiler::parse_plan_file(compiler::plan_file_text(plan), "again.plan", 1u << 20);
    if (!(again.target == plan.target) || again.plan.pins.gemm.size() != plan.plan.pins.gemm.size() ||
        again.plan.pins.attention.size() != plan.plan.pins.attention.size() ||
        again.plan.exchange_stream_words != plan.plan.exchange_stream_words ||
        again.pins_stream_words != plan.pins_stream_words)
      fuzz::fail("a plan file does not read back as written");
    static const compiler::Graph graph = [] {
      model::ViTConfig c = model::ViTConfig::small();
      c.layers = 1;
      return compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4));
    }();
    compiler::CompileOptions options;
    options.plan = plan.plan;  // a version 1 file's W is the default
    compiler::compile_model(graph, target::test16(), options);
  });
  return 0;
}

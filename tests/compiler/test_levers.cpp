// The lever table: each lever described once, and the plan's key, plan-file fields and pin
// checks all taken from it, so a lever added to the table alone is written, read, keyed
// and checked with no other change.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/levers.hpp"
#include "compiler/plan_file.hpp"
#include "small_model.hpp"
#include "support/error.hpp"

using namespace tilevit;
using compiler::Lever;
using compiler::LeverInfo;
using compiler::Plan;

namespace {

// A toy lever added through a table entry alone: the first tile of attention ops only,
// kept in the plan file's field "toy_attention_tiles" (it reuses the tile offsets' Plan
// field, so it needs no new one).
LeverInfo toy_lever() {
  LeverInfo toy = compiler::lever_info(Lever::tile_offset);
  toy.lever = static_cast<Lever>(compiler::kLevers);
  toy.name = "toy_attention_tile";
  toy.op_kinds = compiler::op_kinds({compiler::OpKind::attention});
  toy.kinds_text = "attention";
  toy.pin_text = "pinned toy tile for op";
  toy.file_field = "toy_attention_tiles";
  toy.write = [](const Plan& p, nlohmann::json& file) { file["toy_attention_tiles"] = p.pins.tile_offsets; };
  toy.read = [](const compiler::PlanField& f, Plan& p) {
    for (const auto& [op, v] : f.value.items()) p.pins.tile_offsets[op] = v.get<std::uint32_t>();
  };
  toy.append_key = [](const Plan& p, std::string& key) {
    for (const auto& [op, t] : p.pins.tile_offsets) key += ";" + op + "^" + std::to_string(t);
  };
  return toy;
}

}  // namespace

TEST(LeverTable, OneEntryPerLeverInOrderWithItsName) {
  const auto table = compiler::lever_table();
  ASSERT_EQ(table.size(), compiler::kLevers);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].lever), i);
    EXPECT_STREQ(compiler::to_string(table[i].lever), table[i].name);
  }
  EXPECT_STREQ(compiler::to_string(Lever::split_norm), "split_norm");
}

TEST(LeverTable, EveryLeverRoundTripsThroughAPlanFile) {
  Plan plan = test_support::compile_small(2, test_support::split_norm_pins()).plan;
  plan.exchange_stream_words = 768;
  plan.pins.tile_offsets["layer.qkv"] = 5;
  plan.pins.fp8_attention = {"layer.attention"};
  const compiler::PlanFile file{{"small", 1, "test16", 16}, plan};
  const auto back = compiler::parse_plan_file(compiler::plan_file_text(file), "p.json", 64);
  EXPECT_EQ(back.plan.key(), plan.key());
  for (const std::string field : {"gemm", "attention", "exchange_stream_words", "tile_offsets", "fp8_attention",
                                  "split_norms", "fp8_output_gelus"})
    EXPECT_NE(compiler::plan_file_text(file).find("\"" + field + "\""), std::string::npos) << field;
  // The key starts with W (plan-wide), then the per-op levers in table order.
  EXPECT_EQ(plan.key().rfind("W768;", 0), 0u) << plan.key();
}

TEST(LeverTable, AMoveAndItsReverseComeBackToThePlan) {
  const Plan plan = test_support::compile_small().plan;
  compiler::Move m;
  m.lever = Lever::stream_words;
  m.stream_words = 4096;
  const Plan moved = compiler::apply_move(plan, m);
  EXPECT_EQ(compiler::lever_value(moved, m), "4096");
  EXPECT_EQ(compiler::apply_move(moved, compiler::reverse_move(plan, m)).key(), plan.key());
  compiler::Move gemm;
  gemm.lever = Lever::gemm_grid;
  gemm.op = "layer.mlp.fc2";
  gemm.gemm = compiler::GemmSplits{1, 3, 1};
  EXPECT_EQ(compiler::to_string(compiler::describe_move(plan, gemm)).find("layer.mlp.fc2 gemm_grid "), 0u);
  EXPECT_EQ(compiler::apply_move(compiler::apply_move(plan, gemm), compiler::reverse_move(plan, gemm)).key(), plan.key());
}

TEST(LeverTable, AToyLeverAddedToTheTableAloneIsWrittenReadKeyedAndChecked) {
  std::vector<LeverInfo> table(compiler::lever_table().begin(), compiler::lever_table().end());
  table.erase(table.begin() + static_cast<std::ptrdiff_t>(Lever::tile_offset));  // the toy takes its field's place
  table.push_back(toy_lever());
  Plan plan;
  plan.pins.tile_offsets["layer.attention"] = 3;
  nlohmann::json file;
  compiler::write_lever_fields(plan, file, table);
  EXPECT_EQ(file.at("toy_attention_tiles").at("layer.attention"), 3);
  Plan back;
  compiler::read_lever_fields(file, "toy.json", 64, 16, back, table);
  EXPECT_EQ(back.pins.tile_offsets, plan.pins.tile_offsets);
  EXPECT_NE(compiler::plan_key(plan, table).find(";layer.attention^3"), std::string::npos);
  // Its pins are checked against the op kinds it names: an attention op, not a GEMM.
  const auto graph = compiler::build_vit_graph(model::ViTConfig::small(), model::NumericsConfig::uniform(-4));
  EXPECT_NO_THROW(compiler::check_pins_name_ops(graph, plan, table));
  plan.pins.tile_offsets = {{"layer.qkv", 3}};
  try {
    compiler::check_pins_name_ops(graph, plan, table);
    ADD_FAILURE() << "a GEMM pinned by an attention-only lever";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compiler: pinned toy tile for op layer.qkv: the graph has no attention of that name");
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

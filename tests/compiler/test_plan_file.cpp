// Plan files: the text round-trips, and every malformed or foreign plan is rejected naming
// the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "compiler/plan_file.hpp"
#include "small_model.hpp"
#include "support/error.hpp"

using namespace tilevit;

namespace {

compiler::PlanFile small_plan() {
  const auto compiled = test_support::compile_small();
  return {compiler::plan_target(compiled.executable.config, target::test16()), compiled.plan};
}

std::string error_of(const std::string& text) {
  try {
    compiler::parse_plan_file(text, "p.json", 64);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PlanFile, TheCompilersPlanRoundTripsAndRebuildsTheSameProgram) {
  const auto plan = small_plan();
  EXPECT_FALSE(plan.plan.pins.gemm.empty());
  EXPECT_EQ(plan.plan.pins.attention.size(), 2u);  // the encoder's and the MAP head's
  const auto back = compiler::parse_plan_file(compiler::plan_file_text(plan), "p.json", 64);
  EXPECT_EQ(back.target, plan.target);
  EXPECT_EQ(compiler::plan_file_text(back), compiler::plan_file_text(plan));
  compiler::CompileOptions pinned;
  pinned.plan.pins = back.plan.pins;
  const auto again = test_support::compile_small(2, pinned);
  EXPECT_EQ(again.stats.estimated_cycles, test_support::compile_small().stats.estimated_cycles);
  EXPECT_EQ(again.executable.program.allocations.size(), test_support::compile_small().executable.program.allocations.size());
}

TEST(PlanFile, MalformedPlansNameTheField) {
  const std::string head = R"({"tilevit_plan": 1, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )";
  EXPECT_NE(error_of("not json").find("p.json: not a plan file"), std::string::npos);
  EXPECT_NE(error_of(head + R"("gemm": {}, "attention": {}, "extra": 1})").find("unknown field \"extra\""), std::string::npos);
  EXPECT_NE(error_of(head + R"("gemm": {}})").find("missing field \"attention\""), std::string::npos);
  EXPECT_NE(error_of(head + R"("gemm": {"layer.qkv": {"r": 0, "k": 1, "c": 1}}, "attention": {}})")
                .find("gemm.layer.qkv.r: expected a whole number in 1..64"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("gemm": {"layer.qkv": {"r": 1e30, "k": 1, "c": 1}}, "attention": {}})").find(".r: expected"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("gemm": {}, "attention": {"a": {"query_block": 4}}})").find("missing field \"key_block\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tilevit_plan": 3, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )"
                     R"("exchange_stream_words": 1024, "gemm": {}, "attention": {}})")
                .find("is not version 1 or 2"),
            std::string::npos);
  const std::string v2 = R"({"tilevit_plan": 2, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )";
  EXPECT_NE(error_of(v2 + R"("gemm": {}, "attention": {}})").find("missing field \"exchange_stream_words\""),
            std::string::npos);
  EXPECT_NE(error_of(v2 + R"("exchange_stream_words": 8, "gemm": {}, "attention": {}})")
                .find("exchange_stream_words: expected a whole number in 16..1048576, not 8"),
            std::string::npos);
}

TEST(PlanFile, StreamWordsRoundTripAndAVersionOneFileLeavesThemUnpinned) {
  auto plan = small_plan();
  plan.plan.exchange_stream_words = 4096;
  const auto text = compiler::plan_file_text(plan);
  EXPECT_NE(text.find("\"tilevit_plan\": 2"), std::string::npos);
  EXPECT_EQ(compiler::parse_plan_file(text, "p.json", 64).plan.exchange_stream_words, 4096u);
  plan.pins_stream_words = false;
  const auto v1 = compiler::plan_file_text(plan);
  EXPECT_NE(v1.find("\"tilevit_plan\": 1"), std::string::npos);
  EXPECT_FALSE(compiler::parse_plan_file(v1, "p.json", 64).pins_stream_words);
}

TEST(PlanFile, AColumnQuantumRoundTripsAndIsOptional) {
  auto plan = small_plan();
  plan.plan.exchange_stream_words = 1024;
  plan.plan.pins.gemm["layer.qkv"].column_quantum = 8;
  const auto text = compiler::plan_file_text(plan);
  EXPECT_NE(text.find("\"column_quantum\": 8"), std::string::npos);
  EXPECT_EQ(compiler::parse_plan_file(text, "p.json", 64).plan.pins.gemm.at("layer.qkv").column_quantum, 8u);
  plan.plan.pins.gemm["layer.qkv"].column_quantum = 0;
  const auto without = compiler::plan_file_text(plan);
  EXPECT_EQ(without.find("column_quantum"), std::string::npos);
  EXPECT_EQ(compiler::parse_plan_file(without, "p.json", 64).plan.pins.gemm.at("layer.qkv").column_quantum, 0u);
  const std::string v2 = R"({"tilevit_plan": 2, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )"
                         R"("exchange_stream_words": 1024, "attention": {}, )";
  EXPECT_NE(error_of(v2 + R"("gemm": {"layer.qkv": {"r": 1, "k": 1, "c": 1, "column_quantum": 0}}})")
                .find("gemm.layer.qkv.column_quantum: expected a whole number in 1..64"),
            std::string::npos);
}

TEST(PlanFile, TileOffsetsRoundTripAndStayOnTheMachine) {
  auto plan = small_plan();
  plan.plan.exchange_stream_words = 1024;
  plan.plan.pins.tile_offsets["layer.qkv"] = 7;
  const auto text = compiler::plan_file_text(plan);
  EXPECT_EQ(compiler::parse_plan_file(text, "p.json", 64).plan.pins.tile_offsets, plan.plan.pins.tile_offsets);
  const std::string v2 = R"({"tilevit_plan": 2, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )"
                         R"("exchange_stream_words": 1024, "attention": {}, "gemm": {}, )";
  EXPECT_NE(error_of(v2 + R"("tile_offsets": {"layer.qkv": 16}})").find("tile_offsets.layer.qkv: expected a whole number in 1..15"),
            std::string::npos);
}

TEST(PlanFile, FP8AttentionRoundTripsAndRebuildsTheSameProgram) {
  auto plan = small_plan();
  plan.plan.exchange_stream_words = 1024;
  plan.plan.pins.fp8_attention = {"layer.attention"};
  const auto text = compiler::plan_file_text(plan);
  const auto back = compiler::parse_plan_file(text, "p.json", 64);
  EXPECT_EQ(back.plan.pins.fp8_attention, plan.plan.pins.fp8_attention);
  EXPECT_EQ(compiler::plan_file_text(back), text);
  compiler::CompileOptions pinned;
  pinned.plan.pins = back.plan.pins;
  const auto compiled = test_support::compile_small(2, pinned);
  EXPECT_EQ(compiled.plan.pins.fp8_attention, plan.plan.pins.fp8_attention);  // what --write-plan exports
  EXPECT_TRUE(compiled.executable.numerics.attention_fp8);
  const std::string v2 = R"({"tilevit_plan": 2, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )"
                         R"("exchange_stream_words": 1024, "attention": {}, "gemm": {}, )";
  EXPECT_NE(error_of(v2 + R"("fp8_attention": "layer.attention"})").find("fp8_attention: expected an array of op names"),
            std::string::npos);
  EXPECT_NE(error_of(v2 + R"("fp8_attention": ["a", "a"]})").find("fp8_attention: op a named twice"), std::string::npos);
  // Without the field, FP16 attention: the heuristic plan's.
  EXPECT_TRUE(small_plan().plan.pins.fp8_attention.empty());
  EXPECT_EQ(compiler::plan_file_text(small_plan()).find("fp8_attention"), std::string::npos);
}

TEST(PlanFile, APlanForAnotherModelOrMachineIsRejected) {
  const auto plan = small_plan();
  const auto path = std::filesystem::temp_directory_path() / ("tilevit_plan_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << compiler::plan_file_text(plan);
  EXPECT_NO_THROW(compiler::read_plan_file(path.string(), plan.target));
  auto other = plan.target;
  other.batch = 2;
  try {
    compiler::read_plan_file(path.string(), other);
    ADD_FAILURE() << "a plan for batch 1 accepted for batch 2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a plan for small batch 1 on test16 (16 tiles), not for small batch 2"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(compiler::read_plan_file(path.string(), plan.target), Error);  // missing file
}

TEST(PlanFile, SplitNormsAndFp8GelusRoundTripAndRebuildTheSameProgram) {
  const auto compiled = test_support::compile_small(2, test_support::split_norm_pins());
  compiler::PlanFile plan{compiler::plan_target(compiled.executable.config, target::test16()), compiled.plan};
  EXPECT_EQ(plan.plan.pins.split_norms, (std::set<std::string>{"layer.ln1", "layer.ln2"}));
  EXPECT_EQ(plan.plan.pins.fp8_output_gelus, std::set<std::string>{"layer.mlp.gelu"});
  const auto back = compiler::parse_plan_file(compiler::plan_file_text(plan), "p.json", 64);
  EXPECT_EQ(back.plan.pins.split_norms, plan.plan.pins.split_norms);
  EXPECT_EQ(back.plan.pins.fp8_output_gelus, plan.plan.pins.fp8_output_gelus);
  compiler::CompileOptions pinned;
  pinned.plan.pins = back.plan.pins;
  const auto again = test_support::compile_small(2, pinned);
  EXPECT_EQ(again.stats.estimated_cycles, compiled.stats.estimated_cycles);
  EXPECT_EQ(again.executable.numerics.encoder_norm_part, compiled.executable.numerics.encoder_norm_part);
  // Absent from plans that use neither.
  EXPECT_EQ(compiler::plan_file_text(small_plan()).find("split_norms"), std::string::npos);
  const std::string v2 = R"({"tilevit_plan": 2, "model": "small", "batch": 1, "machine": "test16", "tiles": 16, )"
                         R"("exchange_stream_words": 1024, "attention": {}, "gemm": {}, )";
  EXPECT_NE(error_of(v2 + R"("split_norms": "layer.ln1"})").find("split_norms: expected an array of op names"),
            std::string::npos);
  EXPECT_NE(error_of(v2 + R"("fp8_output_gelus": ["a", "a"]})").find("fp8_output_gelus: op a named twice"),
            std::string::npos);
}

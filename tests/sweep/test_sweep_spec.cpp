// The sweep spec parser and the machine-key table (src/sweep/spec.hpp, machine_keys.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/error.hpp"
#include "sweep/spec.hpp"

namespace tilevit::sweep {
namespace {

SweepSpec parse(const std::string& text) { return parse_sweep_spec(text, "spec.json", "/tmp"); }

// The message of the Error parse throws, "" when it does not throw.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

std::string spec_with_axes(const std::string& axes) {
  return R"({"tilevit_sweep": 1, "machine": "test16", "axes": {)" + axes + "}}";
}

TEST(SweepSpec, AxesTakeTheCanonicalOrderWhateverTheJsonOrder) {
  const SweepSpec s = parse(spec_with_axes(R"("clock_hz": [1000000000], "batch": [1, 2], "preset": ["small"])"));
  ASSERT_EQ(s.axes.size(), 3u);
  EXPECT_EQ(s.axes[0].key, "preset");
  EXPECT_EQ(s.axes[1].key, "batch");
  EXPECT_EQ(s.axes[2].key, "clock_hz");
  EXPECT_NE(s.axes[2].machine, nullptr);
  EXPECT_EQ(s.axes[1].machine, nullptr);
  EXPECT_EQ(s.machine, "test16");
  EXPECT_EQ(s.point_count(), 2u);
}

TEST(SweepSpec, RangesExpandByStepAndByFactor) {
  const SweepSpec s = parse(spec_with_axes(
      R"("batch": {"from": 1, "to": 7, "step": 3}, "exchange_stream_words": {"from": 64, "to": 1000, "factor": 4})"));
  ASSERT_EQ(s.axes.size(), 2u);
  EXPECT_EQ(s.axes[0].values, (std::vector<AxisValue>{std::uint64_t{1}, std::uint64_t{4}, std::uint64_t{7}}));
  EXPECT_EQ(s.axes[1].values, (std::vector<AxisValue>{std::uint64_t{64}, std::uint64_t{256}}));
}

TEST(SweepSpec, DefaultsWithoutOptionalKeys) {
  const SweepSpec s = parse(R"({"tilevit_sweep": 1, "axes": {}})");
  EXPECT_EQ(s.machine, "c600");
  EXPECT_FALSE(s.device_run);
  EXPECT_EQ(s.fp8_scale, -4);
  EXPECT_EQ(s.point_count(), 1u);
}

TEST(SweepSpec, UnknownKeysAreNamed) {
  EXPECT_NE(error_of(R"({"tilevit_sweep": 1, "axes": {}, "machnie": "c600"})").find("unknown key \"machnie\""),
            std::string::npos);
  const std::string e = error_of(spec_with_axes(R"("tilez": [4])"));
  EXPECT_NE(e.find("axes.tilez: unknown key \"tilez\""), std::string::npos) << e;
  EXPECT_NE(e.find("sram_size"), std::string::npos) << "the message lists the sweepable keys: " << e;
  EXPECT_NE(error_of(spec_with_axes(R"("batch": {"from": 1, "to": 2, "stride": 1})")).find("unknown key \"stride\""),
            std::string::npos);
}

TEST(SweepSpec, EmptyRangesAreRefused) {
  EXPECT_NE(error_of(spec_with_axes(R"("batch": [])")).find("axes.batch: empty range"), std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("tiles": {"from": 32, "to": 16, "step": 4})")).find("axes.tiles: empty range"),
            std::string::npos);
}

TEST(SweepSpec, ValuesAreChecked) {
  EXPECT_NE(error_of(spec_with_axes(R"("batch": [0])")).find("axes.batch[0]: expected a whole number in 1..64"),
            std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("batch": [1, 1])")).find("appears twice"), std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("preset": [3])")).find("axes.preset[0]: expected a name"), std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("preset": {"from": 1, "to": 2, "step": 1})")).find("expected a list"),
            std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("batch": {"from": 1, "to": 2})")).find("one of step or factor"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tilevit_sweep": 2, "axes": {}})").find("tilevit_sweep: expected 1"), std::string::npos);
  EXPECT_NE(error_of(R"({"tilevit_sweep": 1, "axes": {}, "fp8_scale": 40})").find("fp8_scale"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{").find("not a sweep spec"), std::string::npos);
}

TEST(SweepSpec, APresetTypoIsTheSpecsError) {
  const std::string e = error_of(spec_with_axes(R"("preset": ["small", "smal"])"));
  EXPECT_NE(e.find("spec.json: axes.preset[1]: unknown model preset \"smal\" (expected one of"), std::string::npos) << e;
  EXPECT_NE(error_of(spec_with_axes(R"("preset": ["dinov2-g"])")).find("axes.preset[0]: model preset \"dinov2-g\""),
            std::string::npos);
}

TEST(SweepSpec, DuplicateKeysAreRefusedAtEveryLevel) {
  EXPECT_NE(error_of(R"({"tilevit_sweep": 1, "axes": {}, "seed": 1, "seed": 2})").find("key \"seed\" appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("batch": [1], "batch": [2])")).find("key \"batch\" appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("batch": {"from": 1, "to": 2, "step": 1, "to": 3})")).find("key \"to\""),
            std::string::npos);
  EXPECT_EQ(error_of(spec_with_axes(R"("batch": {"from": 1, "to": 2, "step": 1}, "layers": {"from": 1, "to": 2, "step": 1})")),
            "") << "equal keys in different objects";
}

TEST(SweepSpec, AMultiChipBaseMachineIsRefused) {
  try {
    base_machine(parse(R"({"tilevit_sweep": 1, "machine": "c600x2", "axes": {}})"), "spec.json");
    ADD_FAILURE() << "c600x2 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find("spec.json: machine: \"c600x2\" is a system of 2 chips"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(base_machine(parse(R"({"tilevit_sweep": 1, "machine": "test16", "axes": {}})"), "spec.json").tiles, 16u);
}

TEST(SweepSpec, KeysSettingTheSameFigureAreExclusive) {
  EXPECT_NE(error_of(spec_with_axes(R"("tiles": [16], "rows": [4])")).find("sweep one of them"), std::string::npos);
  EXPECT_NE(error_of(spec_with_axes(R"("exchange_bytes_per_cycle": [4], "send_bytes_per_cycle": [8])"))
                .find("sweep one of them"),
            std::string::npos);
}

TEST(SweepSpec, TooManyPointsAreRefusedBeforeExpansion) {
  const std::string big = R"({"from": 1, "to": 1000, "step": 1})";
  EXPECT_NE(error_of(spec_with_axes(R"("layers": )" + big + R"(, "clock_hz": {"from": 1000000, "to": 1001000000, "step": 1000000}, "optimization_steps": {"from": 0, "to": 10, "step": 1})"))
                .find("more than 1000000 points"),
            std::string::npos);
}

TEST(SweepSpec, MachineFilesBecomeAbsolute) {
  EXPECT_EQ(parse(R"({"tilevit_sweep": 1, "machine": "my.machine", "axes": {}})").machine, "/tmp/my.machine");
}

TEST(SweepSpec, CanonicalJsonParsesToTheSameSpec) {
  const SweepSpec s = parse(spec_with_axes(R"("preset": ["small"], "sram_size": {"from": 557056, "to": 638976, "step": 32768})"));
  const SweepSpec again = parse(to_json(s).dump());
  EXPECT_EQ(to_json(again), to_json(s));
  EXPECT_EQ(again.axes[1].values.size(), 3u);
}

TEST(MachineKeys, TilesKeepTheBaseColumns) {
  const auto m = apply_machine_keys(target::test16(), {{find_machine_key("tiles"), 32}});
  EXPECT_EQ(m.tiles, 32u);
  EXPECT_EQ(m.rows, 8u);
  EXPECT_EQ(m.columns, 4u);
  EXPECT_EQ(m.name, "test16 tiles=32");
  EXPECT_THROW(apply_machine_keys(target::test16(), {{find_machine_key("tiles"), 30}}), Error);
}

TEST(MachineKeys, SramSizeMovesTheLastRegionAndTheTail) {
  const target::MachineDescription& base = target::c600();
  const auto m = apply_machine_keys(base, {{find_machine_key("sram_size"), base.sram_size - 32768}});
  EXPECT_EQ(m.sram_end(), base.sram_end() - 32768);
  EXPECT_EQ(m.regions.back().end, m.sram_end());
  EXPECT_EQ(m.reserved.back().end(), m.sram_end());
  EXPECT_EQ(m.reserved.back().size, base.reserved.back().size);
  EXPECT_LT(m.free_bytes_per_tile(false), base.free_bytes_per_tile(false));
  // Not a whole number of the interleaved region's 32 KiB units: the machine file's own error.
  try {
    apply_machine_keys(base, {{find_machine_key("sram_size"), base.sram_size - 1024}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sram_size="), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[region interleaved]"), std::string::npos) << e.what();
  }
}

TEST(MachineKeys, ClockAndExchangeFigures) {
  const auto m = apply_machine_keys(target::test16(), {{find_machine_key("exchange_bytes_per_cycle"), 8},
                                                       {find_machine_key("clock_hz"), 1'000'000'000}});
  EXPECT_EQ(m.exchange_send_bytes_per_cycle, 8u);
  EXPECT_EQ(m.exchange_receive_bytes_per_cycle, 8u);
  EXPECT_EQ(m.clock_hz, 1'000'000'000u);
  EXPECT_EQ(m.name, "test16 clock_hz=1000000000 exchange_bytes_per_cycle=8") << "table order, not argument order";
  EXPECT_EQ(apply_machine_keys(target::test16(), {}), target::test16());
}

TEST(MachineKeys, ExchangeRatesAreWholeWords) {
  EXPECT_NE(error_of(spec_with_axes(R"("exchange_bytes_per_cycle": [2])")).find("exchange_bytes_per_cycle"),
            std::string::npos);
  // In range but not whole words: the machine file's own error, naming the key.
  try {
    apply_machine_keys(target::test16(), {{find_machine_key("receive_bytes_per_cycle"), 6}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[exchange] receive_bytes_per_cycle: must be a multiple of 4"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilevit::sweep

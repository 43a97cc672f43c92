// The compiled program through the package codec: it round-trips, still verifies, its
// bytes do not depend on the thread count, and it refuses numbers that do not fit.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>

#include "package/program_codec.hpp"
#include "edit_section.hpp"
#include "small_model.hpp"
#include "support/error.hpp"

using namespace tilevit;
using test_support::compile_small;
using test_support::replace_once;

namespace {
std::vector<std::byte> package_bytes(const compiler::CompiledModel& m) {
  return package::encode_package(m.executable).bytes();
}
}  // namespace

TEST(Compile, PackageRoundTripsAndVerifies) {
  const auto m = compile_small();
  const auto container = package::Container::from_bytes(package_bytes(m), "small.tvpkg");
  const auto c = package::decode_package(container);
  EXPECT_EQ(c.program.steps.size(), m.executable.program.steps.size());
  EXPECT_EQ(c.program.allocations.size(), m.executable.program.allocations.size());
  EXPECT_EQ(c.bindings.size(), m.executable.bindings.size());
  EXPECT_EQ(c.config.width, 144);
  EXPECT_EQ(c.machine, target::test16());
  EXPECT_TRUE(compiler::verify_program(c.machine, c.program, c.bindings, c.tensors).ok());
  // The exchange schedule and the local copies come back as stored.
  for (std::size_t s = 0; s < c.program.steps.size(); ++s) {
    const auto &got = c.program.steps[s], &want = m.executable.program.steps[s];
    EXPECT_EQ(got.exchange_cycles, want.exchange_cycles);
    EXPECT_EQ(got.selects, want.selects);
    ASSERT_EQ(got.local_copies.size(), want.local_copies.size());
    for (std::size_t i = 0; i < got.local_copies.size(); ++i)
      EXPECT_EQ(got.local_copies[i].destination.offset, want.local_copies[i].destination.offset);
    ASSERT_EQ(got.exchange.size(), want.exchange.size());
    for (std::size_t i = 0; i < got.exchange.size(); ++i) {
      EXPECT_EQ(got.exchange[i].send_cycle, want.exchange[i].send_cycle);
      EXPECT_EQ(got.exchange[i].land_cycle, want.exchange[i].land_cycle);
    }
  }
}

TEST(Compile, SameBytesWithOneOrTwoThreads) {
  omp_set_num_threads(1);
  const auto a = package_bytes(compile_small());
  omp_set_num_threads(2);
  const auto b = package_bytes(compile_small());
  EXPECT_EQ(a, b);
}

namespace {

// The small package with section `name` edited; the decoder's message ("" if none).
template <typename Edit>
std::string decode_error_after(const std::string& name, Edit edit) {
  try {
    package::decode_package(package::Container::from_bytes(
        test_support::with_section_edited(package_bytes(compile_small()), name, edit), "edited.tvpkg"));
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PackageCodec, UneditedSectionsDecode) {
  EXPECT_EQ(decode_error_after("model", [](std::string&) {}), "");
}

// Fuzz findings: JSON numbers were cast to the field's type unchecked (1e300 layers
// became INT_MIN, a float in a u32 field undefined behaviour).
TEST(PackageCodec, ModelNumbersMustFitTheirFields) {
  EXPECT_NE(decode_error_after("model", [](std::string& t) { replace_once(t, "\"layers\": 2", "\"layers\": 1e300"); })
                .find("section \"model\": config.layers: expected an integer in [-2147483648, 2147483647], got 1e+300"),
            std::string::npos);
  EXPECT_NE(decode_error_after("model", [](std::string& t) { replace_once(t, "\"layers\": 2", "\"layers\": 2.0"); })
                .find("config.layers: expected an integer"),
            std::string::npos);
  EXPECT_NE(decode_error_after("model", [](std::string& t) { replace_once(t, "\"begin\": ", "\"begin\": -"); })
                .find("loop.begin: expected an integer in [0, 4294967295]"),
            std::string::npos);
  EXPECT_NE(decode_error_after("model",
                               [](std::string& t) { replace_once(t, "9.999999974752427e-07", "1e300"); })
                .find("config.layer_norm_eps: expected a finite number"),
            std::string::npos);
}

// Fuzz finding: an unbounded `waves` field sized a per-wave table (96 GiB) in inspect
// and run; waves must now be exactly the dense wave numbers the transfers use.
TEST(PackageCodec, ExchangeWavesAreDenseAndCounted) {
  auto m = compile_small();
  auto& steps = m.executable.program.steps;
  const auto with_exchange = std::find_if(steps.begin(), steps.end(), [](auto& s) { return !s.exchange.empty(); });
  ASSERT_NE(with_exchange, steps.end());
  auto decode_error = [](const compiler::CompiledModel& edited) -> std::string {
    try {
      package::decode_package(package::Container::from_bytes(package_bytes(edited), "edited.tvpkg"));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  auto huge = m;
  huge.executable.program.steps[with_exchange - steps.begin()].waves = UINT32_MAX;
  huge.executable.program.steps[with_exchange - steps.begin()].exchange.back().wave = UINT32_MAX - 1;
  EXPECT_NE(decode_error(huge).find("after wave"), std::string::npos) << decode_error(huge);
  auto extra = m;
  extra.executable.program.steps[with_exchange - steps.begin()].waves += 1;
  EXPECT_NE(decode_error(extra).find("exchange waves, its transfers use"), std::string::npos) << decode_error(extra);
}

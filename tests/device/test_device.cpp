#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

#include "compiler/compile.hpp"
#include "compiler/exchange_schedule.hpp"
#include "compiler/program_walk.hpp"
#include "compiler/verify.hpp"
#include "device/device.hpp"
#include "model/random_model.hpp"
#include "reference/forward.hpp"
#include "small_model.hpp"
#include "support/error.hpp"

using namespace tilevit;

namespace {

struct Built {
  compiler::Executable contents;
  model::ViTWeights weights;
  std::vector<std::vector<float>> images;
};

Built build(model::ViTConfig config, const target::MachineDescription& machine, std::uint64_t seed = 11,
            const compiler::CompileOptions& options = {}) {
  const auto compiled =
      compiler::compile_model(compiler::build_vit_graph(config, model::NumericsConfig::uniform(-4)), machine, options);
  const auto container = package::Container::from_bytes(package::encode_package(compiled.executable).bytes(), "t.tvpkg");
  Built b{package::decode_package(container), model::load_weights(model::RandomModelSource(config, seed), config), {}};
  for (int i = 0; i < config.batch; ++i) b.images.push_back(model::random_image(config, seed, i));
  return b;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Device, SmallModelBitExactWithDeviceNumerics) {
  model::ViTConfig c = model::ViTConfig::small();
  c.batch = 2;
  Built b = build(c, target::test16());
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  device::CallTiming timing;
  const auto got = dev.run(b.images, &timing);
  const auto want = reference::DeviceNumericsModel(b.weights, b.contents.numerics).forward(b.images);
  EXPECT_EQ(got, want);
  EXPECT_GT(timing.device_cycles, 0u);
  // Resident weights: a second call with the same images gives the same bits.
  EXPECT_EQ(dev.run(b.images), got);
}

TEST(Device, FullWidthTwoLayersBitExactWithDeviceNumerics) {
  model::ViTConfig c = model::ViTConfig::so400m();
  c.layers = 2;
  Built b = build(c, target::c600());
  // The compiler split GEMMs and attention: the reference must follow the same splits.
  EXPECT_GT(b.contents.numerics.attention_key_block, 0u);
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  const auto got = dev.run(b.images);
  const auto want = reference::DeviceNumericsModel(b.weights, b.contents.numerics).forward(b.images);
  EXPECT_EQ(got, want);
}

// Splits the automatic choice does not take on the small model, pinned by op name
// (small_model.hpp); the reference follows the recorded splits bit for bit.
TEST(Device, PinnedSplitsOnTheSmallModelBitExactWithDeviceNumerics) {
  Built b = build(model::ViTConfig::small(), target::test16(), 11, test_support::pinned_splits());
  EXPECT_EQ(b.contents.numerics.attention_key_block, 1u);
  EXPECT_EQ(b.contents.numerics.role_inner_block(model::GemmRole::MlpDown), 32u);
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  EXPECT_EQ(dev.run(b.images), reference::DeviceNumericsModel(b.weights, b.contents.numerics).forward(b.images));
}

// The LayerNorms split over the residual's 3 column parts and the GELU with FP8 output:
// the reference combines the same parts in the same order; the fused GELU gives the
// unfused bits.
TEST(Device, SplitLayerNormAndFp8GeluBitExactWithDeviceNumerics) {
  const compiler::CompileOptions options = test_support::split_norm_pins();
  Built b = build(model::ViTConfig::small(), target::test16(), 11, options);
  EXPECT_EQ(b.contents.numerics.encoder_norm_part, (std::array<std::uint32_t, 2>{48, 48}));
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  const auto got = dev.run(b.images);
  EXPECT_EQ(got, reference::DeviceNumericsModel(b.weights, b.contents.numerics).forward(b.images));

  compiler::CompileOptions unfused = options;
  unfused.plan.pins.fp8_output_gelus.clear();
  Built u = build(model::ViTConfig::small(), target::test16(), 11, unfused);
  device::Device plain(u.contents);
  plain.upload_weights(u.weights);
  EXPECT_EQ(plain.run(u.images), got);
}

// FP8 attention products pinned (with key blocks, so the panel-rounded partials are
// combined): the device's FP8 kernels and the reference agree bit for bit, and the package
// records the choice for the reference.
TEST(Device, FP8AttentionOnTheSmallModelBitExactWithDeviceNumerics) {
  compiler::CompileOptions o = test_support::pinned_splits();
  o.plan.pins.fp8_attention = {"layer.attention"};
  Built b = build(model::ViTConfig::small(), target::test16(), 11, o);
  ASSERT_TRUE(b.contents.numerics.attention_fp8);
  EXPECT_EQ(b.contents.numerics.attention_scale, -4);
  std::set<compiler::KernelKind> kinds;
  for (const auto& s : b.contents.program.steps)
    for (const auto& call : s.compute) kinds.insert(call.kind);
  EXPECT_TRUE(kinds.count(compiler::KernelKind::attention_scores_fp8));
  EXPECT_TRUE(kinds.count(compiler::KernelKind::attention_values_fp8));
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  const auto got = dev.run(b.images);
  EXPECT_EQ(got, reference::DeviceNumericsModel(b.weights, b.contents.numerics).forward(b.images));
  // The FP8 products change the result (else the test could not tell them apart).
  model::NumericsConfig fp16 = b.contents.numerics;
  fp16.attention_fp8 = false;
  EXPECT_NE(got, reference::DeviceNumericsModel(b.weights, fp16).forward(b.images));
}

TEST(Device, KernelOperandOutsideItsTileIsCaught) {
  Built b = build(model::ViTConfig::small(), target::test16());
  // Move the first GEMM's output allocation to the end of SRAM so the kernel runs off it.
  for (auto& s : b.contents.program.steps)
    for (auto& call : s.compute)
      if (call.kind == compiler::KernelKind::gemm_fp8) {
        b.contents.program.allocations[call.operands[2].allocation].address = target::test16().sram_end() - 16;
        goto moved;
      }
moved:
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  const std::string message = error_of([&] { dev.run(b.images); });
  EXPECT_NE(message.find("tile "), std::string::npos) << message;
  EXPECT_NE(message.find("superstep "), std::string::npos) << message;
  EXPECT_NE(message.find("gemm_fp8"), std::string::npos) << message;
  EXPECT_NE(message.find("outside the tile's SRAM"), std::string::npos) << message;
}

// An unverified program whose call disagrees with its kind's signature (rows doubled, so
// the kernel would read past its operands) is refused before anything runs.
TEST(Device, CallNotMatchingItsSignatureIsRefusedAtLoad) {
  Built b = build(model::ViTConfig::small(), target::test16());
  for (auto& s : b.contents.program.steps)
    for (auto& call : s.compute)
      if (call.kind == compiler::KernelKind::gemm_fp8) {
        call.dims[0] *= 2;
        const std::string message = error_of([&] { device::Device dev(b.contents); });
        EXPECT_NE(message.find("gemm_fp8 does not match its signature"), std::string::npos) << message;
        EXPECT_NE(message.find("tile " + std::to_string(call.tile)), std::string::npos) << message;
        return;
      }
  FAIL() << "no FP8 GEMM in the small model";
}

TEST(Device, KernelReadingAnotherTileIsCaught) {
  Built b = build(model::ViTConfig::small(), target::test16());
  auto& call = b.contents.program.steps.at(b.contents.program.loop_begin + 1).compute.at(0);
  call.tile = (call.tile + 1) % 16;
  device::Device dev(b.contents);
  dev.upload_weights(b.weights);
  EXPECT_NE(error_of([&] { dev.run(b.images); }).find("not in this tile's memory"), std::string::npos);
}

// The exchange tables are resolved once, but every copy is still checked when it runs.
TEST(Device, TransferOutsideItsTileIsCaught) {
  for (const bool other_tile : {false, true}) {
    Built b = build(model::ViTConfig::small(), target::test16());
    compiler::Endpoint* victim = nullptr;
    for (auto& s : b.contents.program.steps)
      for (auto& x : s.exchange)
        if (!victim && !x.destinations.empty()) victim = &x.destinations.back();
    ASSERT_NE(victim, nullptr);
    if (other_tile)
      victim->tile = (victim->tile + 1) % 16;
    else
      b.contents.program.allocations[victim->allocation].address = target::test16().sram_end() - 4;
    device::Device dev(b.contents);
    dev.upload_weights(b.weights);
    const std::string message = error_of([&] { dev.run(b.images); });
    EXPECT_NE(message.find("transfer destination"), std::string::npos) << message;
    EXPECT_NE(message.find(other_tile ? "names memory of another tile" : "outside the tile's SRAM"), std::string::npos)
        << message;
  }
}

// The device model's cycles follow the package's schedule, not the compiler's estimate:
// the phase's last landing moved D cycles later adds D cycles per execution of its step
// (and the verifier rejects the package, whose stored phase length no longer covers it).
// The device counts each step's cost from the compiler's step cost table, which reads the
// stored schedule: a phase that lasts longer costs that much more per execution, and a
// transfer landing after the stored length is the verifier's to catch.
TEST(Device, CyclesFollowTheStoredSchedule) {
  Built b = build(model::ViTConfig::small(), target::test16());
  auto cycles_of = [&](const compiler::Executable& e) {
    device::Device dev(e);
    dev.upload_weights(b.weights);
    device::CallTiming timing;
    dev.run(b.images, &timing);
    return timing.device_cycles;
  };
  const std::uint64_t before = cycles_of(b.contents);
  EXPECT_EQ(before, compiler::summarize_program(b.contents.machine, b.contents.program, b.contents.tensors).estimated_cycles);
  auto& p = b.contents.program;
  std::uint32_t step = 0;
  while (step < p.steps.size() && (p.steps[step].exchange.empty() || !compiler::in_loop(p, step))) ++step;
  ASSERT_LT(step, p.steps.size());
  auto& x = p.steps[step].exchange;
  auto last = std::max_element(x.begin(), x.end(), [&](auto& a, auto& c) {
    return compiler::land_end(b.contents.machine, a) < compiler::land_end(b.contents.machine, c);
  });
  constexpr std::uint32_t kLater = 500;
  last->send_cycle += kLater, last->land_cycle += kLater;
  EXPECT_EQ(cycles_of(b.contents), before) << "the step cost is the stored phase length";
  p.steps[step].exchange_cycles += kLater;
  EXPECT_EQ(cycles_of(b.contents), before + std::uint64_t(kLater) * compiler::executions(p, step));
  p.steps[step].exchange_cycles -= kLater;
  const auto report = compiler::verify_program(b.contents.machine, p, b.contents.bindings, b.contents.tensors);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.violations.front().find("the phase's scheduled length is"), std::string::npos) << report.violations.front();
}

TEST(Device, WeightsOfAnotherModelAreRejected) {
  Built b = build(model::ViTConfig::small(), target::test16());
  model::ViTConfig other = model::ViTConfig::so400m();
  other.layers = 1;
  const auto weights = model::load_weights(model::RandomModelSource(other, 1), other);
  device::Device dev(b.contents);
  const std::string message = error_of([&] { dev.upload_weights(weights); });
  EXPECT_NE(message.find("package was compiled for small"), std::string::npos) << message;
}

TEST(Device, HostBindingNotMatchingTheModelIsRejected) {
  Built b = build(model::ViTConfig::small(), target::test16());
  for (auto& t : b.contents.tensors)
    if (t.name == "layer.qkv.weight") t.name = "layer.qkv_renamed.weight";
  device::Device dev(b.contents);
  const std::string message = error_of([&] { dev.upload_weights(b.weights); });
  EXPECT_NE(message.find("has no counterpart in the model"), std::string::npos) << message;
}

// Tiles lie an odd number of 64 B lines apart in host memory, so the same address on
// different tiles falls into different cache sets (at the C600's 624 KiB, a multiple of
// 16 KiB, it fell into 8 of an L2's 2,048 sets); each tile still gets its own bytes.
TEST(TileMemory, TilesAreAnOddNumberOfLinesApartAndDisjoint) {
  for (std::uint32_t bytes : {1u, 63u, 64u, 65u, 128u, 4096u, 624u * 1024u}) {
    const std::uint32_t stride = device::TileMemory::stride_for(bytes);
    EXPECT_GE(stride, bytes);
    EXPECT_LT(stride, bytes + 128);
    EXPECT_EQ(stride % 64, 0u);
    EXPECT_EQ(stride / 64 % 2, 1u) << bytes;
  }
  std::set<std::uint64_t> sets;
  const std::uint64_t c600 = device::TileMemory::stride_for(624 * 1024);
  for (std::uint64_t t = 0; t < 1472; ++t) sets.insert(t * c600 / 64 % 2048);
  EXPECT_EQ(sets.size(), 1472u);  // every tile's first line in its own L2 set (was 8 sets)

  device::TileMemory memory(5, 1000);
  for (std::uint32_t t = 0; t < 5; ++t) {
    auto tile = memory.tile(t);
    ASSERT_EQ(tile.size(), 1000u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tile.data()) % 64, 0u);
    std::fill(tile.begin(), tile.end(), static_cast<std::uint8_t>(t + 1));
  }
  for (std::uint32_t t = 0; t < 5; ++t) {
    for (std::uint8_t b : memory.tile(t)) {
      ASSERT_EQ(b, t + 1) << "tile " << t;
    }
  }
  ASSERT_EQ(memory.tiles(), 5u);
  EXPECT_EQ(memory.tile(1).data() - memory.tile(0).data(), std::ptrdiff_t(memory.stride()));
}

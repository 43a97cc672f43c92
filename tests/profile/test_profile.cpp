// The profile: what build_profile records, the .tvprof file, query and diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <fstream>

#include "../package/edit_section.hpp"
#include "compiler/compile.hpp"
#include "compiler/exchange_schedule.hpp"
#include "compiler/step_costs.hpp"
#include "compiler/verify.hpp"
#include "compiler/program_walk.hpp"
#include "profile/analysis.hpp"
#include "profile/profile.hpp"
#include "profile/profile_file.hpp"
#include "support/error.hpp"

using namespace tilevit;

namespace {

compiler::CompiledModel compile_small(compiler::ProfilingOptions profiling, std::uint32_t words = 1024) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = 2;
  return compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(),
                                 compiler::CompileOptions{compiler::Plan{{}, words}, profiling});
}

profile::Profile profile_of(const compiler::CompiledModel& m, compiler::ProfileDetail o) {
  return profile::build_profile(target::test16(), m.executable.program, o);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tilevit_test_profile_" + name)).string();
}

}  // namespace

// For every granularity, each tile records exactly the samples its reserved buffer holds,
// samples are in time order and disjoint, and the span is the compiler's estimate.
TEST(Profile, RecordsMatchTheReservedBuffersAtEveryGranularity) {
  for (auto g : {compiler::Granularity::graph, compiler::Granularity::phase, compiler::Granularity::kernel})
    for (std::uint32_t detail : {1u, 2u}) {
      const compiler::ProfilingOptions options{true, {g, detail}};
      const auto m = compile_small(options);
      ASSERT_TRUE(compiler::verify_program(target::test16(), m.executable.program, m.executable.bindings, m.executable.tensors).ok());
      const auto p = profile_of(m, {g, detail});
      EXPECT_EQ(p.span, m.stats.estimated_cycles);
      const auto records = compiler::profile_records_per_tile(m.executable.program, 16, options);
      std::uint64_t buffer_bytes = 0;
      for (const auto& a : m.executable.program.allocations)
        if (a.request.label == "support.profile_samples") buffer_bytes += a.request.bytes;
      std::uint64_t total_records = 0;
      for (std::uint32_t t = 0; t < 16; ++t) {
        std::uint64_t recorded = 0, previous_end = 0;
        for (const auto& s : p.samples[t]) {
          EXPECT_LT(s.start, s.end);
          EXPECT_GE(s.start, previous_end) << "tile " << t;
          previous_end = s.end;
          recorded += p.meta[s.meta].kind != profile::SampleKind::idle;
        }
        EXPECT_EQ(recorded, records[t]) << compiler::to_string(g) << " tile " << t;
        EXPECT_LE(previous_end, p.span);
        total_records += records[t];
      }
      EXPECT_EQ(buffer_bytes, total_records * compiler::kProfileRecordBytes);
    }
}

TEST(Profile, SpanIsTheCompilerEstimateAndEveryTileCycleIsAccountedFor) {
  const auto m = compile_small({});
  const auto p = profile_of(m, {compiler::Granularity::kernel, 1});
  EXPECT_EQ(p.span, m.stats.estimated_cycles);
  const auto cycles = [&](profile::SampleKind k) { return p.tile_cycles[std::size_t(k)]; };
  using K = profile::SampleKind;
  EXPECT_EQ(cycles(K::compute) + cycles(K::idle) + cycles(K::sync) + cycles(K::exchange), p.span * 16);
  EXPECT_GT(cycles(K::compute), 0u);
  EXPECT_GT(cycles(K::exchange), 0u);
  EXPECT_EQ(cycles(K::sync) % (16 * target::test16().phase_overhead_cycles), 0u);
  // Kernel granularity: per tile, compute samples sum to the tile's compute time over the
  // detailed iteration; one repeat sample stands for the second layer.
  std::size_t repeats = 0;
  for (const auto& tile : p.samples)
    for (const auto& s : tile) repeats += p.meta[s.meta].kind == profile::SampleKind::repeat;
  EXPECT_EQ(repeats, 16u);
}

TEST(ProfileFile, RoundTripsExactly) {
  const auto m = compile_small({});
  auto p = profile_of(m, {compiler::Granularity::kernel, 2});
  p.package_sha256 = "abc";
  p.model = "small, 2 layers";
  const std::string path = temp_path("roundtrip.tvprof");
  profile::write_profile(path, p);
  const auto q = profile::read_profile(path);
  EXPECT_EQ(q.samples, p.samples);
  EXPECT_EQ(q.meta, p.meta);
  EXPECT_EQ(q.span, p.span);
  EXPECT_EQ(q.tile_cycles, p.tile_cycles);
  EXPECT_EQ(q.uncalibrated_compute_cycles, p.uncalibrated_compute_cycles);
  EXPECT_EQ(q.options.granularity, compiler::Granularity::kernel);
  EXPECT_EQ(q.model, p.model);
  EXPECT_EQ(profile::encode_profile(q), profile::encode_profile(p));  // deterministic
  std::filesystem::remove(path);
}

TEST(ProfileFile, CorruptedOrTruncatedFilesAreClearErrors) {
  const auto m = compile_small({});
  const auto bytes = profile::encode_profile(profile_of(m, {}));
  auto expect_error = [](std::vector<std::byte> b, const std::string& needle) {
    try {
      profile::decode_profile(std::move(b), "x.tvprof");
      ADD_FAILURE() << "accepted a bad profile";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      const std::string what = e.what();
      EXPECT_NE(what.find("x.tvprof"), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  };
  expect_error(std::vector<std::byte>(bytes.begin(), bytes.begin() + bytes.size() / 2), "");
  expect_error(std::vector<std::byte>(bytes.begin(), bytes.begin() + 10), "");
  auto flipped = bytes;
  flipped[bytes.size() - 5] ^= std::byte{0x40};
  expect_error(flipped, "");
  expect_error({}, "");
}

// Files whose hashes are right but whose content is not: every check after the hash.
TEST(ProfileFile, InconsistentContentIsRejectedAfterTheHashCheck) {
  const auto good = profile_of(compile_small({}), {});
  auto expect_rejected = [](const profile::Profile& p, const std::string& needle) {
    try {
      profile::decode_profile(profile::encode_profile(p), "bad.tvprof");
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.tvprof"), std::string::npos) << e.what();
    }
  };
  auto p = good;
  p.samples[3][2].meta = static_cast<std::uint32_t>(p.meta.size());
  expect_rejected(p, "tile 3 sample 2: meta index out of range");
  p = good;
  std::swap(p.samples[5][0], p.samples[5][1]);
  expect_rejected(p, "tile 5 sample 1: cycles out of order");
  p = good;
  p.samples[0].back().end = p.span + 1;
  expect_rejected(p, "outside the span");
  p = good;
  p.meta[0].step = p.steps;
  expect_rejected(p, "step out of range");
  p = good;
  p.samples.pop_back();
  expect_rejected(p, "tile count differs");
  p = good;
  p.clock_hz = 0;
  expect_rejected(p, "clock_hz");
  p = good;
  p.samples[2][0].uncalibrated_cycles = p.samples[2][0].end - p.samples[2][0].start + 1;
  expect_rejected(p, "tile 2 sample 0: uncalibrated cycles exceed the sample");
  p = good;
  p.uncalibrated_compute_cycles = p.tile_cycles[std::size_t(profile::SampleKind::compute)] + 1;
  expect_rejected(p, "uncalibrated_compute_cycles");
}

// Version 1 files (before calibration coverage) are refused in one line that says what to do.
TEST(ProfileFile, Version1FilesAreRejectedInOneLine) {
  const auto bytes = profile::encode_profile(profile_of(compile_small({}), {}));
  const auto original = package::Container::from_bytes(bytes, "original");
  package::ContainerWriter w;
  for (const auto& section : original.sections()) {
    const auto payload = original.payload(section);
    w.add_section(section.name, 1, std::vector<std::byte>(payload.begin(), payload.end()));
  }
  try {
    profile::decode_profile(w.bytes(), "old.tvprof");
    ADD_FAILURE() << "accepted a version 1 profile";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("old.tvprof: profile format version 1", 0), 0u) << what;
    EXPECT_NE(what.find("this build reads version 2"), std::string::npos) << what;
    EXPECT_NE(what.find("tilevit run"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

// Every compute sample carries the kernel cycles no measurement covers; at every
// granularity they add up to the header's total, which counts every tile and iteration.
// On test16 with the C600's kernel generation, so that its GEMMs count as calibrated.
TEST(Profile, CarriesUncalibratedCyclesAtEveryGranularity) {
  const auto m = compile_small({});
  const auto& program = m.executable.program;
  auto machine = target::test16();
  machine.costs.generation = target::c600().costs.generation;
  std::uint64_t expected = 0;  // every call and local copy of every executed step, on every tile
  compiler::walk_program(program, [&](std::uint32_t step, std::uint32_t) {
    for (const auto& call : program.steps[step].compute)
      expected += compiler::estimate_call_uncalibrated_cycles(machine, call);
    for (const auto bytes : compiler::tile_local_copy_bytes(machine, program.steps[step]))
      expected += compiler::local_copy_cycles(machine, bytes);
  });
  ASSERT_GT(expected, 0u);  // the small model's attention combines key blocks
  auto profile = [&](compiler::ProfileDetail o) { return profile::build_profile(machine, program, o); };
  for (auto g : {compiler::Granularity::graph, compiler::Granularity::phase, compiler::Granularity::kernel}) {
    SCOPED_TRACE(compiler::to_string(g));
    const auto p = profile({g, UINT32_MAX});
    EXPECT_EQ(p.uncalibrated_compute_cycles, expected);
    EXPECT_LT(p.uncalibrated_compute_cycles, p.tile_cycles[std::size_t(profile::SampleKind::compute)]);
    std::uint64_t sampled = 0;
    for (const auto& tile : p.samples)
      for (const auto& s : tile) {
        const auto& meta = p.meta[s.meta];
        if (meta.kind != profile::SampleKind::compute && meta.kind != profile::SampleKind::graph) {
          EXPECT_EQ(s.uncalibrated_cycles, 0u);
        }
        if (meta.kernel == "attention_combine" || meta.kernel == "local copy") {
          EXPECT_EQ(s.uncalibrated_cycles, s.end - s.start);  // derived, all of it
        }
        if (meta.kernel == "gemm_fp8") {
          EXPECT_EQ(s.uncalibrated_cycles, 0u);
        }
        sampled += s.uncalibrated_cycles;
      }
    EXPECT_EQ(sampled, expected);
  }
  // The query's rows: a calibrated share per row with compute samples, none for the others.
  const auto rows = profile::query_profile(profile({compiler::Granularity::kernel, UINT32_MAX}), profile::GroupBy::kernel);
  for (const auto& r : rows) {
    if (r.key == "attention_combine") {
      EXPECT_DOUBLE_EQ(r.calibrated_share(), 0.0);
    } else if (r.key == "gemm_fp8") {
      EXPECT_DOUBLE_EQ(r.calibrated_share(), 1.0);
    } else if (r.key == "(exchange)") {
      EXPECT_LT(r.calibrated_share(), 0.0);
    }
  }
}

// Fuzz findings: header numbers were cast unchecked (flop_per_cycle_fp8 1e300, an
// iterations_in_detail past 2^64, parsed as a float, cast into a u32).
TEST(ProfileFile, HeaderNumbersMustFitTheirFields) {
  const auto bytes = profile::encode_profile(profile_of(compile_small({}), {}));
  auto error_after = [&](const std::string& from, const std::string& to) -> std::string {
    try {
      profile::decode_profile(test_support::with_section_edited(
                                  bytes, "profile", [&](std::string& t) { test_support::replace_once(t, from, to); }),
                              "edited.tvprof");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_after("\"flop_per_cycle_fp8\": ", "\"flop_per_cycle_fp8\": 1e300, \"x\": ")
                .find("machine.flop_per_cycle_fp8: expected an integer in [0, 4294967295], got 1e+300"),
            std::string::npos);
  EXPECT_NE(error_after("\"iterations_in_detail\": ", "\"iterations_in_detail\": 19223372036854775807, \"y\": ")
                .find("iterations_in_detail: expected an integer in [0, 4294967295], got 1.9223372036854776e+19"),
            std::string::npos);
}

TEST(Profile, FlopsCountEveryKernelsArithmetic) {
  const auto m = compile_small({});
  const auto p = profile_of(m, {compiler::Granularity::kernel, 2});
  std::map<std::string, std::uint64_t> flops;
  for (const auto& tile : p.samples)
    for (const auto& s : tile) flops[p.meta[s.meta].kernel] += s.flops;
  for (const char* k : {"gemm_fp8", "attention_scores", "attention_values", "attention_combine", "layernorm", "gelu"})
    EXPECT_GT(flops[k], 0u) << k;
  // Combine calls: rows x head_dim outputs from `blocks` partials {P.V, sum}; with both
  // layers in detail every loop step counts twice.
  const auto& program = m.executable.program;
  std::uint64_t expected = 0;
  for (std::uint32_t i = 0; i < program.steps.size(); ++i)
    for (const auto& c : program.steps[i].compute)
      if (c.kind == compiler::KernelKind::attention_combine) {
        const auto shape = c.shape();
        const std::uint64_t rows = shape[compiler::Dim::rows], d = shape[compiler::Dim::head_dim];
        const std::uint64_t blocks = shape[compiler::Dim::key_blocks], times = compiler::executions(program, i);
        expected += times * (rows * (d + 1) * (blocks - 1) + rows * d);
      }
  EXPECT_EQ(flops["attention_combine"], expected);
}

TEST(ProfileFile, MissingFileNamesThePath) {
  try {
    profile::read_profile("/nonexistent/p.tvprof");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/p.tvprof"), std::string::npos);
  }
}

TEST(ProfileQuery, GroupsAddUpToTheSampledTime) {
  const auto p = profile_of(compile_small({}), {compiler::Granularity::phase, 2});
  std::uint64_t sampled = 0, idle = 0;
  for (const auto& tile : p.samples)
    for (const auto& s : tile) {
      sampled += s.end - s.start;
      if (p.meta[s.meta].kind == profile::SampleKind::idle) idle += s.end - s.start;
    }
  for (auto g : {profile::GroupBy::kind, profile::GroupBy::kernel, profile::GroupBy::operation, profile::GroupBy::phase,
                 profile::GroupBy::tile}) {
    std::uint64_t sum = 0;
    const auto rows = profile::query_profile(p, g);
    for (const auto& r : rows) sum += r.cycles;
    EXPECT_EQ(sum, g == profile::GroupBy::tile ? sampled - idle : sampled);  // a tile's row: its busy time
    for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i - 1].cycles, rows[i].cycles);
  }
  EXPECT_EQ(profile::query_profile(p, profile::GroupBy::tile).size(), 16u);
  EXPECT_THROW(profile::group_by_from_string("colour"), Error);
}

namespace {
std::map<std::string, std::uint64_t> cycles_by_key(const std::vector<profile::QueryRow>& rows) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& r : rows) out[r.key] = r.cycles;
  return out;
}
}  // namespace

// Issue #22, item 3: the iterations not recorded in detail are extrapolated from the
// detailed one, so the whole-call view equals a profile that details every iteration,
// and no "repeat" row stands on top.
TEST(ProfileQuery, UndetailedIterationsAreExtrapolated) {
  const auto m = compile_small({});
  const auto one = profile_of(m, {compiler::Granularity::phase, 1});
  const auto all = profile_of(m, {compiler::Granularity::phase, UINT32_MAX});
  ASSERT_EQ(one.loop_count, 2u);
  for (auto g : {profile::GroupBy::kind, profile::GroupBy::kernel, profile::GroupBy::operation, profile::GroupBy::phase,
                 profile::GroupBy::tile}) {
    const auto rows = profile::query_profile(one, g);
    EXPECT_EQ(cycles_by_key(rows), cycles_by_key(profile::query_profile(all, g)));
    for (const auto& r : rows) EXPECT_EQ(r.key.find("repeat"), std::string::npos) << r.key;
    // One layer: the same from one detailed iteration as from the mean of both.
    EXPECT_EQ(cycles_by_key(profile::query_profile(one, g, profile::QueryView::layer)),
              cycles_by_key(profile::query_profile(all, g, profile::QueryView::layer)));
  }
  const auto coverage = profile::loop_coverage(one, profile::QueryView::layer);
  EXPECT_TRUE(coverage.extrapolated);
  EXPECT_EQ(coverage.detailed, 1u);
  std::uint64_t layer_cycles = 0;
  for (const auto& r : profile::query_profile(one, profile::GroupBy::kind, profile::QueryView::layer)) layer_cycles += r.cycles;
  EXPECT_EQ(layer_cycles, coverage.view_span * one.tiles);  // every tile accounted for, over one iteration
  EXPECT_LT(coverage.view_span, one.span);
  EXPECT_THROW(profile::query_profile(profile_of(m, {compiler::Granularity::phase, 0}), profile::GroupBy::kind,
                                      profile::QueryView::layer),
               Error);
}

// Issue #22, item 3: a tile's share is its busy time, and tiles tie-break by number.
TEST(ProfileQuery, TilesByBusyShareInNumericOrder) {
  const auto p = profile_of(compile_small({}), {compiler::Granularity::phase, 1});
  const auto rows = profile::query_profile(p, profile::GroupBy::tile);
  double low = 1, high = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    low = std::min(low, rows[i].share);
    high = std::max(high, rows[i].share);
    EXPECT_LE(rows[i].share, 1.0);
    EXPECT_EQ(rows[i].share, double(rows[i].cycles) / double(p.span));
    if (i > 0 && rows[i - 1].cycles == rows[i].cycles)
      EXPECT_LT(std::stoi(rows[i - 1].key.substr(5)), std::stoi(rows[i].key.substr(5)));
  }
  EXPECT_LT(low, high);  // not every tile the same share
}

TEST(ProfileDiff, DifferentModelOrLayersIsADifference) {
  auto a = profile_of(compile_small({}), {});
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = 1;
  const auto one_layer = compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)),
                                                 target::test16(), compiler::CompileOptions{compiler::Plan{{}, 1024}, {}});
  auto b = profile_of(one_layer, {});
  a.model = "small, 2 layers, batch 1";
  b.model = "small, 1 layer, batch 1";
  const auto r = profile::diff_profiles(a, b);
  ASSERT_EQ(r.identity.size(), 2u);
  EXPECT_NE(r.identity[0].find("1 layer"), std::string::npos);
  EXPECT_NE(r.identity[1].find("2 vs 1"), std::string::npos);
  b = a;
  b.machine_name = "other";
  EXPECT_EQ(profile::diff_profiles(a, b).identity.size(), 1u);
}

TEST(ProfileDiff, SamePackageTwiceIsNoDifference) {
  const auto m = compile_small({});
  auto a = profile_of(m, {});
  auto b = profile_of(m, {});
  a.package_sha256 = b.package_sha256 = "same";
  const auto r = profile::diff_profiles(a, b);
  EXPECT_TRUE(r.same_package);
  EXPECT_EQ(r.span_delta, 0);
  EXPECT_EQ(r.changed_steps, 0u);
  EXPECT_EQ(r.unmatched_steps, 0u);
  EXPECT_GT(r.matched_steps, 0u);
  EXPECT_GT(r.samples_compared, 0u);
  EXPECT_EQ(r.samples_differing, 0u);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(ProfileDiff, ChangedFlagReportsTheChangedSteps) {
  auto a = profile_of(compile_small({}, 1024), {compiler::Granularity::phase, 2});
  auto b = profile_of(compile_small({}, 16), {compiler::Granularity::phase, 2});  // smaller exchange waves: more, shorter waves
  a.package_sha256 = "a";
  b.package_sha256 = "b";
  const auto r = profile::diff_profiles(a, b);
  EXPECT_FALSE(r.same_package);
  EXPECT_FALSE(r.warnings.empty());
  EXPECT_NE(r.span_delta, 0);
  EXPECT_GT(r.changed_steps, 0u);
  ASSERT_FALSE(r.steps.empty());
  std::int64_t sum = 0;
  for (const auto& d : r.steps) sum += d.delta;
  EXPECT_EQ(sum, r.span_delta);  // the steps tile the call: their changes add up to the span's
}

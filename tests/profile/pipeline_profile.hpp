#pragma once
// A pipeline's call profile for the profile tests: siglip2-tiny's two stages (two layers
// each, one in detail) on test16 chips, two micro-batches, so the chips work at once.
#include <algorithm>
#include <vector>

#include "compiler/compile.hpp"
#include "profile/profile_file.hpp"
#include "profile/system_profile.hpp"

namespace tilevit::test_support {

inline constexpr compiler::ProfileDetail kStageDetail{compiler::Granularity::phase, 1};

inline profile::Profile stage_profile(compiler::StageRange range) {
  model::ViTConfig c = model::ViTConfig::preset("siglip2-tiny");  // 4 layers
  c.batch = 1;
  const auto graph = compiler::build_stage_graph(c, model::NumericsConfig::uniform(-4), range, 2);
  const auto m = compiler::compile_model(graph, target::test16(), compiler::CompileOptions{{}, {true, kStageDetail}});
  return profile::build_profile(target::test16(), m.executable.program, kStageDetail);
}

// Two micro-batches through both stages: a stage starts one when it is free and the
// micro-batch has crossed the link before it.
inline profile::Profile two_chip_profile() {
  const std::vector<profile::Profile> stages{stage_profile({0, true, false}), stage_profile({2, false, true})};
  const std::vector<profile::SystemLinkRun> links{{"link chip 0 -> 1", 6144, 1795}};
  const std::vector<std::uint64_t> busy{stages[0].span + links[0].cycles, stages[1].span};
  std::vector<std::vector<std::uint64_t>> starts(2, std::vector<std::uint64_t>(2));
  std::vector<std::uint64_t> free_at(2, 0);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t s = 0, arrival = 0; s < 2; ++s) {
      starts[i][s] = std::max(free_at[s], arrival);
      arrival = free_at[s] = starts[i][s] + busy[s];
    }
  const auto p = profile::system_profile("test16x2", stages, links, starts, free_at.back());
  return profile::decode_profile(profile::encode_profile(p), "x2.tvprof");  // through the file
}

}  // namespace tilevit::test_support

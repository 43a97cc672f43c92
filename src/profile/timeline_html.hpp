#pragma once
// model.html: the standalone execution timeline of a Profile. One HTML file with the page
// (src/profile/web/timeline.*) and the data embedded: the meta table as JSON and the
// samples as little-endian typed-array columns in base64. No network: it opens from
// file://. What the page shows and how to drive it: docs/VIEWERS.md.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "profile/profile.hpp"

namespace tilevit::profile {

// FLOP per tile-cycle of the matrix unit, for the per-operation "achieved vs peak" column.
// peaks_of(profile) gives the ones the profile recorded from its machine
// (MachineDescription::flop_per_cycle_fp16/_fp8); the defaults are the C600's (64 FP16 or
// 128 FP8 multiply-adds per cycle per tile). Kernels whose name contains "fp8" are
// compared with the FP8 peak, every other kernel with the FP16 peak.
struct TimelinePeaks {
  double fp16_flops_per_tile_cycle = 128;
  double fp8_flops_per_tile_cycle = 256;
};

// Deterministic: the same profile gives the same bytes.
std::string render_timeline_html(const Profile& profile, const TimelinePeaks& peak_flops_per_tile_cycle = {});
// The page's data (schema_version 1, docs/VIEWERS.md "Embedded data"): also the compare
// page's, once per side.
nlohmann::json timeline_data_json(const Profile& profile, const TimelinePeaks& peaks);
// The peaks the profile recorded from its machine (the C600's when it has none).
TimelinePeaks peaks_of(const Profile& profile);

}  // namespace tilevit::profile

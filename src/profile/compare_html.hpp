#pragma once
// compare.html: two profiles side by side in one standalone page (no network): both
// timelines on one time axis (zoom and pan locked; B can be aligned on any step), the step,
// operation and kernel tables of compare_profiles ordered by cycle difference, the
// flame-graph difference and both memory peaks per tile. Page sources:
// src/profile/web/compare.*; what it shows: docs/VIEWERS.md, "The comparison page".
#include <string>

#include "profile/compare.hpp"

namespace tilevit::profile {

// name_a, name_b: what the header calls each side (e.g. the profiles' paths).
// Deterministic: the same inputs give the same bytes.
std::string render_compare_html(const Profile& a, const Profile& b, const std::string& name_a, const std::string& name_b);

}  // namespace tilevit::profile

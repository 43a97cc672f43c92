#pragma once
// A profile in the Chrome trace event format (opens in Perfetto and chrome://tracing):
// one track per tile, a complete event per sample (idle gaps left out), cycles mapped to
// microseconds at the machine clock and kept raw in args.
#include <string>

#include "profile/profile.hpp"

namespace tilevit::profile {

std::string chrome_trace_json(const Profile& profile);

}  // namespace tilevit::profile

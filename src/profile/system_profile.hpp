#pragma once
// One profile of a multi-chip pipeline's call (docs/PROFILE_FORMAT.md, "Profiles of several
// chips"): a group of rows per chip (its tiles, each stage's profile repeated for every
// micro-batch at the cycle the schedule starts it there) and a row per link (each
// micro-batch's transfer of the residual stream, with its bytes and cycles). Each chip's
// group keeps its stage's loop (RowGroup::loop_count) and operation bounds (times the
// micro-batches, OperationBound::row_group the chip's group). The result is
// an ordinary Profile (rows as tiles, Profile::row_groups naming them), so the viewers,
// query, diff and compare read it as they read one chip's.
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace tilevit::profile {

struct SystemLinkRun {
  std::string name;  // e.g. "link chip 0 -> 1"
  std::uint64_t bytes = 0, cycles = 0;  // one micro-batch's transfer
};

// stages[s]: stage s's profile of one micro-batch; links[s]: from stage s to s + 1;
// starts[i][s]: the cycle micro-batch i starts on stage s (its link follows the stage's
// span); span: the call's cycles (the schedule's makespan).
Profile system_profile(const std::string& machine_name, const std::vector<Profile>& stages,
                       const std::vector<SystemLinkRun>& links, const std::vector<std::vector<std::uint64_t>>& starts,
                       std::uint64_t span);

}  // namespace tilevit::profile

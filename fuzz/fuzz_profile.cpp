// Profile files (.tvprof) as `tilevit profile query/diff/compare` read them: decode, every
// query grouping, step spans, the bounds, a diff and a comparison against itself (hashes
// rewritten first: container_rehash.hpp).
#include <vector>

#include "container_rehash.hpp"
#include "fuzz_support.hpp"
#include "profile/analysis.hpp"
#include "profile/bounds.hpp"
#include "profile/compare.hpp"
#include "profile/profile_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  fuzz::expect_clean([&] {
    std::vector<std::byte> file = fuzz::rehashed_file(data, size);
    const profile::Profile p = profile::decode_profile(std::move(file), "fuzz.tvprof");
    for (auto group : {profile::GroupBy::kind, profile::GroupBy::kernel, profile::GroupBy::operation,
                       profile::GroupBy::phase, profile::GroupBy::tile})
      profile::query_profile(p, group);
    profile::step_spans(p);
    profile::diff_profiles(p, p);
    profile::bound_report(p);
    profile::compare_profiles(p, p);
  });
  return 0;
}

// Profile files (.tvprof) as `tilevit profile render/query/diff/compare` read them: decode,
// every query grouping, step spans, the bounds, a diff and a comparison against itself, the
// viewers' data and the trace (hashes rewritten first: container_rehash.hpp).
#include <nlohmann/json.hpp>
#include <vector>

#include "container_rehash.hpp"
#include "fuzz_support.hpp"
#include "profile/analysis.hpp"
#include "profile/bounds.hpp"
#include "profile/compare.hpp"
#include "profile/profile_file.hpp"
#include "profile/rows.hpp"
#include "profile/timeline_html.hpp"
#include "profile/trace.hpp"

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
    profile::compare_sides_json(p, p);
    profile::timeline_data_json(p, profile::peaks_of(p));
    profile::chrome_trace_json(p);
    profile::row_names(p);
  });
  return 0;
}

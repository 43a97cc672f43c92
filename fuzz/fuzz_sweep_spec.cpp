// Sweep specs as `tilevit sweep SPEC` reads them: parse and check, the canonical JSON must
// parse to the same spec, then the first and last points are formed and their machine
// keys applied to test16 (an invalid machine is a clean rejection, as a failed point).
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "sweep/points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  if (size > sweep::kMaxSpecBytes) return 0;  // read_sweep_spec refuses larger files first
  fuzz::expect_clean([&] {
    const sweep::SweepSpec spec = sweep::parse_sweep_spec(std::string(fuzz::as_text(data, size)), "fuzz.json", "/tmp");
    const nlohmann::json canonical = sweep::to_json(spec);
    if (sweep::to_json(sweep::parse_sweep_spec(canonical.dump(), "again.json", "/tmp")) != canonical)
      fuzz::fail("a sweep spec does not read back as written");
    static const std::string base = target::to_text(target::test16());
    for (const std::uint64_t index : {std::uint64_t{0}, spec.point_count() - 1}) {
      const sweep::SweepPoint point = sweep::point_at(spec, base, index);
      if (point.id.size() != 16) fuzz::fail("a point id is not 16 hex digits");
      fuzz::expect_clean([&] { sweep::apply_machine_keys(target::test16(), sweep::settings_of(spec, point).machine); });
    }
  });
  return 0;
}

// Hardware kernel measurements (the kernels.json format) as `tilevit cost-check` reads
// them: parse, classify every entry (measurement_catalog), predict every point on the
// shipped machines, and fit the kernel generations the entries are dated on (--fit).
#include <set>

#include "fuzz_support.hpp"
#include "target/calibration.hpp"
#include "target/cost_fit.hpp"
#include "target/kernel_measurements.hpp"
#include "target/machine.hpp"
#include "target/measurement_catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  const std::string_view text = fuzz::as_text(data, size);
  target::is_kernel_measurements_format(text);
  fuzz::expect_clean([&] {
    const target::MeasurementCatalog catalog = target::build_catalog(target::parse_kernel_measurements(text, "fuzz.json"));
    target::check_catalog(target::test16(), catalog);
    std::set<int> days;
    for (const auto& p : catalog.points) days.insert(p.date.day);
    // The first few generations only: each fit walks the whole catalog.
    std::size_t fits = 0;
    for (const int day : days)
      if (fits++ < 8) fuzz::expect_clean([&] { target::fit_generation(catalog, target::day_text(day)); });
  });
  return 0;
}

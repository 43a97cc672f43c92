// Calibration / measurement JSON as `tilevit cost-check` reads it: parse, then predict
// every measurement on the shipped test machine.
#include "fuzz_support.hpp"
#include "target/calibration.hpp"
#include "target/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  fuzz::expect_clean([&] {
    const auto measurements = target::parse_calibration(fuzz::as_text(data, size), "fuzz.json");
    target::check_costs(target::test16(), measurements);
  });
  return 0;
}

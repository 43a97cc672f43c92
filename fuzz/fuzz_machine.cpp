// Machine descriptions: parse, and a description that parses must survive its canonical
// text unchanged (parse_machine(to_text(m)) == m), which packages rely on.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "target/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  fuzz::expect_clean([&] {
    const target::MachineDescription m = target::parse_machine(fuzz::as_text(data, size), "fuzz.machine");
    if (!(target::parse_machine(target::to_text(m), "canonical") == m)) {
      std::fprintf(stderr, "tilevit fuzz: canonical text does not round-trip\n");
      std::abort();
    }
  });
  return 0;
}

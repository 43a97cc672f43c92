// Package container + program codec + verifier, as `tilevit verify` and `inspect` take a
// file: open, decode, verify, and for a package that verifies, the cost summary inspect
// prints from it. Hashes are rewritten first (container_rehash.hpp), so that mutations
// reach the codec and the verifier.
#include <vector>

#include "compiler/step_costs.hpp"
#include "compiler/verify.hpp"
#include "container_rehash.hpp"
#include "fuzz_support.hpp"
#include "package/program_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  fuzz::expect_clean([&] {
    std::vector<std::byte> file = fuzz::rehashed_file(data, size);
    const auto container = package::Container::from_bytes(std::move(file), "fuzz.tvpkg");
    const compiler::Executable c = package::decode_package(container);
    const auto report = compiler::verify_program(c.machine, c.program, c.bindings, c.tensors);
    if (!report.ok()) return;
    compiler::step_costs(c.machine, c.program);
    compiler::summarize_program(c.machine, c.program, c.tensors);
  });
  return 0;
}

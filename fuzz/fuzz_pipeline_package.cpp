// A pipeline package (system/pipeline_package.hpp), as `tilevit run --package` takes it:
// the outer container's hashes are rewritten first (container_rehash.hpp) so mutations
// reach the system section and the nested stage packages; a pipeline that decodes is
// summarised as `compile` reports it.
#include <nlohmann/json.hpp>
#include <vector>

#include "container_rehash.hpp"
#include "fuzz_support.hpp"
#include "system/pipeline_package.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilevit;
  fuzz::expect_clean([&] {
    std::vector<std::byte> file = fuzz::rehashed_file(data, size);
    const auto container = package::Container::from_bytes(std::move(file), "fuzz.tvpkg");
    const system::CompiledPipeline p = system::decode_pipeline(container);
    system::pipeline_figures(p);
    system::pipeline_json(p);
  });
  return 0;
}

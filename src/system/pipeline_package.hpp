#pragma once
// A pipeline as one file: a .tvpkg container (package/container.hpp) with
//   system   (v1) JSON: the whole machine's canonical text, per stage its chip and layers,
//            and micro_batches when above 1 (absent: 1)
//   stage.S  (v1) stage S's own package (package/program_codec.hpp), one per chip
// Deterministic (a pure function of the compiled pipeline) and hashed like any package.
// Decoding bounds every count and checks that the stages are one model cut in order:
// consecutive layers, the first embeds, the last pools, each for one chip of the machine,
// and verifies each stage's program (compiler/verify.hpp).
#include <string>

#include "package/container.hpp"
#include "system/pipeline.hpp"

namespace tilevit::system {

package::ContainerWriter encode_pipeline(const CompiledPipeline& pipeline);
// Throws Error(kExitBadInput), one line naming the container and what is wrong.
CompiledPipeline decode_pipeline(const package::Container& container);
// Whether a container holds a pipeline (a "system" section) rather than one chip's package.
bool is_pipeline(const package::Container& container);

struct LoadedPipeline {
  CompiledPipeline pipeline;
  std::string sha256;  // hex, of the container
};
LoadedPipeline load_pipeline(const std::string& path);

}  // namespace tilevit::system

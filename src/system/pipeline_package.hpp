#pragma once
// A pipeline as one file: a .tvpkg container (package/container.hpp) with
//   system   (v1) JSON: the whole machine's canonical text, per stage its chip and layers,
//            and micro_batches when above 1 (absent: 1)
//   stage.S  (v1) stage S's own package (package/program_codec.hpp), one per chip
// Deterministic (a pure function of the compiled pipeline) and hashed like any package.
// Decoding bounds every count and checks that the stages are one model cut in order:
// consecutive layers, the first embeds, the last pools, each for one chip of the machine,
// and verifies each stage's program (compiler/verify.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "package/container.hpp"
#include "package/verified_package.hpp"
#include "system/pipeline.hpp"

namespace tilevit::system {

package::ContainerWriter encode_pipeline(const CompiledPipeline& pipeline);
// Throws Error(kExitBadInput), one line naming the container and what is wrong.
CompiledPipeline decode_pipeline(const package::Container& container);
// Whether a container holds a pipeline (a "system" section) rather than one chip's package.
bool is_pipeline(const package::Container& container);

// The stages a pipeline's system section declares (Error(kExitBadInput) if the section is bad).
std::uint32_t pipeline_stage_count(const package::Container& container);
// Stage S's nested package as a container named "<file>: stage.S", not yet decoded.
package::Container stage_container(const package::Container& container, std::uint32_t stage);
// Stage S alone, decoded and verified exactly as a one-chip package is
// (package::verify_package), and checked against the system section: the system's chip,
// the stage's layers, embedding and pooling in pipeline order. Error(kExitBadInput).
package::VerifiedPackage decode_pipeline_stage(const package::Container& container, std::uint32_t stage);
// The system section's checks of one decoded stage (its chip, layers, embedding and
// pooling), and of all of them (also: one model, the layer total, micro-batches); not
// their programs, which verify_program checks. Error(kExitBadInput), naming the stage.
void check_pipeline_stage(const package::Container& container, std::uint32_t stage, const compiler::Executable& executable);
void check_pipeline(const package::Container& container, const std::vector<compiler::Executable>& stages);

struct LoadedPipeline {
  CompiledPipeline pipeline;
  std::string sha256;  // hex, of the container
};
LoadedPipeline load_pipeline(const std::string& path);

}  // namespace tilevit::system

#pragma once
// The compiled model as a package: sections of a .tvpkg container (docs/PACKAGE_FORMAT.md).
//   machine   (v1) canonical machine description text
//   model     (v1) JSON: model config, numerics (precisions, scales, chosen splits), loop
//   tensors   (v1) graph tensors: name, shape, dtype, kind, role
//   program   (v1) op names, supersteps: kernel calls and transfers (allocation + offset)
//   placement (v1) every allocation: tile, label, kind, region, alignment, lifetime, address
//   bindings  (v1) host tensors <-> tile allocations (weights, image, embedding)
// Reading validates every count, index and enum before use; the verifier
// (compiler/verify.hpp) then re-checks what the planner promised.
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "package/container.hpp"

namespace tilevit::package {

// The container bytes of an executable: a pure function of it.
ContainerWriter encode_package(const compiler::Executable& executable);
compiler::Executable decode_package(const Container& container);

}  // namespace tilevit::package

#pragma once
// The program as stable text, as the compiler's passes leave it (`tilevit compile
// --dump-after PASS`, in the manner of MLIR's and Halide's pass dumps): its steps with
// their kernel calls (kind, tile, dims, operands), local copies and transfers (waves and
// scheduled cycles), then every allocation (tile, kind, bytes, lifetime in phases and,
// once placed, its address). Nothing in it depends on the host, the thread count or the
// time: two dumps of one compile are byte-identical, so a dump can be diffed.
#include <string>

#include "compiler/program.hpp"

namespace tilevit::compiler {

std::string dump_program(const CompiledProgram& program);

}  // namespace tilevit::compiler

#pragma once
// A model that does not fit the machine, said in a user's terms: the worst tile's bytes
// needed and available, and the largest batch and layer count that do fit, found by
// compiling smaller models (the compiler's own answer, no estimate).
#include <functional>
#include <string>

#include "compiler/compile.hpp"

namespace tilevit::job {

// The largest n in [lo, hi] for which fits(n) holds, bisecting from `guess` (fits is
// assumed to hold below any n where it holds); lo - 1 when none does. Every n returned
// was tried.
int largest_fitting(int lo, int hi, int guess, const std::function<bool(int)>& fits);

// Throws the one-line compiler::DoesNotFit (an Error, kExitBadInput; its overflow the worst
// tile's) for `graph` not fitting `machine`:
// "So400m/14 (27 layers, batch 3) does not fit c600: tile 5 needs ... B at step 40, ... B
// available; fits with --batch 2 (27 layers) or --layers 20 (batch 3)".
[[noreturn]] void throw_does_not_fit(const compiler::Graph& graph, const target::MachineDescription& machine,
                                     compiler::CompileOptions options, const compiler::DoesNotFit& error,
                                     const std::function<void(const std::string&)>& progress);

// "1 layer", "27 layers".
std::string layers_text(int layers);

}  // namespace tilevit::job

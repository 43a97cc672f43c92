#pragma once
// Endpoint-balanced exchange waves (--exchange-stream-words W): every transfer is cut
// into pieces of at most W words, and pieces are dealt to waves so that in each wave no
// tile sends or receives more than W words. Smaller instruction tables than one
// latency-first phase, and the unit the cost model times.
#include <cstdint>

#include "compiler/program.hpp"

namespace tilevit::compiler {

// Rewrites every superstep's exchange in place: pieces, wave numbers, wave order.
// Deterministic (greedy first fit in transfer order). A piece also holds at most
// `max_piece_words` (the machine's longest single transfer).
void schedule_exchange_waves(CompiledProgram& program, std::uint32_t tiles, std::uint32_t stream_words,
                             std::uint32_t max_piece_words = UINT32_MAX);

}  // namespace tilevit::compiler

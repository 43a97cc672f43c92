#pragma once
// The schedule, lowered: a statically scheduled BSP program for every tile. Each
// superstep is a compute phase (kernel calls, every operand on the calling tile) then an
// exchange phase (transfers between tiles, multicast once). Steps [loop_begin, loop_end)
// run loop_count times; an operand's address advances by `layer_stride` bytes per
// iteration, which is how a kernel walks a per-layer weight sequence.
//
// Before placement operands name an allocation and an offset in it; placement resolves
// them to tile addresses (resolve_addresses in compile.hpp).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/kernel_table.hpp"
#include "compiler/placement.hpp"
#include "compiler/plan.hpp"
#include "compiler/profiling.hpp"

namespace tilevit::compiler {


struct Operand {
  std::uint32_t allocation = 0;  // index into CompiledProgram::allocations (on the calling tile)
  std::uint32_t offset = 0;      // bytes from the allocation's start
  std::uint32_t bytes = 0;
  std::uint32_t layer_stride = 0;  // bytes added per loop iteration
};

struct KernelCall {
  KernelKind kind = KernelKind::add;
  std::uint32_t tile = 0;
  std::uint32_t op = 0;            // index into CompiledProgram::op_names (for profiles)
  KernelDims dims{};               // the values of kernel_info(kind).dims(), in that order
  std::vector<Operand> operands;   // kernel_info(kind).operands(): inputs, then outputs
  std::int32_t scale = 0;          // cast_fp8 / gemm_fp8: the FP8 scale S
  float param = 0;                 // layernorm eps, attention score scale
  KernelShape shape() const { return KernelShape(kind, dims); }
};

struct Endpoint {
  std::uint32_t tile = 0;
  std::uint32_t allocation = 0;
  std::uint32_t offset = 0;
};

struct Transfer {
  Endpoint source;
  std::uint32_t bytes = 0;          // a multiple of 4: the exchange moves 32-bit words
  std::uint32_t source_layer_stride = 0;
  std::vector<Endpoint> destinations;  // multicast: sent once, received by each
  std::uint32_t wave = 0;  // exchange wave inside the phase (exchange_waves.hpp)
  // The exchange schedule (exchange_schedule.hpp), in cycles from the start of the phase's
  // timed exchange (after its overhead): the first word leaves the sender's lane at
  // send_cycle and lands on every destination at land_cycle, each taking the machine's
  // exchange_cycles(bytes) (compiler::send_end, compiler::land_end).
  std::uint32_t send_cycle = 0;
  std::uint32_t land_cycle = 0;
  std::uint32_t words() const { return bytes / 4; }
};

// A receiver selects its incoming sender and sets its write pointer: from `cycle` on,
// `tile` listens to `source` (until its next select event).
struct SelectEvent {
  std::uint32_t tile = 0;
  std::uint32_t cycle = 0;
  std::uint32_t source = 0;
  bool operator==(const SelectEvent&) const = default;
};

// Data a tile already holds, wanted elsewhere on the same tile: copied by the tile's
// workers at the end of its compute phase, not looped back through the exchange.
struct LocalCopy {
  std::uint32_t tile = 0;
  Endpoint source;  // on `tile`
  std::uint32_t bytes = 0;
  std::uint32_t source_layer_stride = 0;
  Endpoint destination;  // on `tile`
};

struct Superstep {
  std::string label;
  std::vector<KernelCall> compute{};
  std::vector<Transfer> exchange{};  // in wave order
  std::uint32_t waves = 0;         // exchange waves of this phase
  std::vector<LocalCopy> local_copies{};  // after the compute phase's kernels, on each tile
  std::vector<SelectEvent> selects{};   // the receivers' control, by tile then cycle
  std::uint32_t exchange_cycles = 0;    // scheduled length: the last word's landing (no overhead)
};

// One allocation on one tile: what placement is asked for and what it answered.
struct Allocation {
  std::uint32_t tile = 0;
  AllocationRequest request;  // label, kind, bytes, alignment, region, lifetime (superstep indices)
  std::uint32_t address = 0;  // set by placement
};

struct CompiledProgram {
  std::vector<Superstep> steps;
  std::uint32_t loop_begin = 0, loop_end = 0, loop_count = 1;
  std::uint32_t exchange_stream_words = kDefaultStreamWords;  // W: no tile sends or receives more per wave
  std::vector<std::string> op_names;
  std::vector<Allocation> allocations;  // every tile's, with its lifetime and (after placement) address
  ProfilingOptions profiling;           // what the tiles record (profiling builds reserve buffers for it)
};

}  // namespace tilevit::compiler

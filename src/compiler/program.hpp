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

#include "compiler/placement.hpp"
#include "compiler/profiling.hpp"

namespace tilevit::compiler {

enum class KernelKind : std::uint8_t {
  gemm_fp8,          // out[M,N] f16 = A[M,K] f143 x B[K,N] f143, FP16 accumulator per K32 panel
  gemm_fp16,         // out[M,N] f16 = A[M,K] f16 x B[K,N] f16, FP32 accumulation
  reduce_add,        // out[n] f16 = fp16(sum_p partial_p[n]) in FP32, p ascending
  bias_add,          // out[M,N] = fp16(in[M,N] + bias[N])
  add,               // out[n] = fp16(a[n] + b[n])
  layernorm,         // rows x width, FP32 statistics, gamma/beta f16
  gelu,              // tanh form, f16 -> f16
  cast_fp8,          // f16 -> f143 at `scale`
  attention_scores,  // s[q,k] f32 = (Q K^T) * scale for one head's query and key blocks, stored key-major
                     // (element k * queries + q), + row maxima
  attention_values,  // with all blocks' maxima: p = fp16(exp(s - max)), partial {P.V, sum} f32 per row
  attention_combine, // key blocks' partials summed in block order -> fp16(o / l)
};
const char* kernel_name(KernelKind kind);

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
  std::array<std::uint32_t, 4> dims{};  // gemm: M, K, N | reduce_add: n, partials | bias_add: M, N |
                                        // add/gelu/cast: n | layernorm: rows, width |
                                        // attention_scores: queries, keys, head_dim | attention_values:
                                        // queries, keys, head_dim, key blocks | attention_combine: rows, head_dim, key blocks
  std::vector<Operand> operands;   // inputs in kernel order, then the output
  std::int32_t scale = 0;          // cast_fp8 / gemm_fp8: the FP8 scale S
  float param = 0;                 // layernorm eps, attention score scale
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
};

struct Superstep {
  std::string label;
  std::vector<KernelCall> compute;
  std::vector<Transfer> exchange;  // in wave order
  std::uint32_t waves = 0;         // exchange waves of this phase
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
  std::uint32_t exchange_stream_words = 1024;  // W: no tile sends or receives more per wave
  std::vector<std::string> op_names;
  std::vector<Allocation> allocations;  // every tile's, with its lifetime and (after placement) address
  ProfilingOptions profiling;           // what the tiles record (profiling builds reserve buffers for it)
};

}  // namespace tilevit::compiler

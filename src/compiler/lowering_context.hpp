#pragma once
// Shared state of one lowering: the supersteps being built, the allocations and their
// lifetimes, each tensor's distribution, host bindings. The per-op lowerings
// (lower_*.cpp) use only this interface.
#include <optional>
#include <string>
#include <vector>

#include "compiler/lower.hpp"

namespace tilevit::compiler {

class LoweringContext {
 public:
  LoweringContext(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options);

  const Graph& graph;
  const target::MachineDescription& machine;
  const CompileOptions options;
  std::uint32_t tiles() const { return machine.tiles; }

  // Superstep structure.
  void begin_op(const std::string& name);
  std::uint32_t op_index() const { return op_index_; }
  void add_transfers(std::vector<Transfer> transfers);  // into the current exchange phase
  void close_step_if_exchanging();                      // the next kernels run after the exchange
  void add_call(KernelCall call);                       // touches its operands' allocations
  std::uint32_t step() const;                           // index of the current superstep
  void begin_loop();
  void end_loop(std::uint32_t count);
  bool in_loop() const { return in_loop_; }

  // Allocations (lifetimes, in phases, cover every use: a kernel's in the current step's
  // compute phase, a transfer's in its exchange phase).
  std::uint32_t allocate(std::uint32_t tile, const std::string& label, AllocationKind kind, std::uint32_t bytes,
                         RegionNeed region, std::uint32_t alignment = 32);
  void touch(std::uint32_t allocation, std::uint32_t phase);
  void conflict(std::uint32_t a, std::uint32_t b);  // GEMM output vs streamed operand
  Operand operand(std::uint32_t allocation, std::uint32_t offset, std::uint32_t bytes, std::uint32_t stride = 0);

  // Tensors.
  // A weight read as data (the MAP probe) gets a resident copy on its first use.
  const Distribution& dist(int tensor);
  void set_dist(int tensor, Distribution d);
  bool is_weight(int tensor) const;  // parameter or sequence
  std::uint32_t layers_of(int tensor) const;  // loop_count for sequences, else 1
  // A resident copy of rows/cols of a weight tensor on `tile` (host binding); returns the
  // allocation. Sequences hold every layer's slice, layer_stride apart.
  std::uint32_t resident_weight(int tensor, std::uint32_t tile, std::uint32_t row0, std::uint32_t rows,
                                std::uint32_t col0, std::uint32_t cols, RegionNeed region, std::uint32_t* stride);
  // A weight row vector [1 x cols] (LayerNorm scale/bias) stored once on home tiles and
  // multicast each time into `allocation` on every tile in `tiles`.
  void broadcast_vector(int tensor, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& destinations);
  // Geometry only (no allocations): rows split over at most tiles() tiles, whole rows each.
  Distribution row_split(std::uint32_t rows, std::uint32_t cols, DType dtype) const;
  // Fresh allocations for every block of `geometry`.
  Distribution allocate_like(const Distribution& geometry, const std::string& label, DType dtype,
                             AllocationKind kind = AllocationKind::activation, RegionNeed region = RegionNeed::any);
  // Gathers `tensor` into fresh allocations with `geometry`'s blocks; the transfers go
  // into the current exchange phase.
  Distribution gather(int tensor, const Distribution& geometry, const std::string& label);

  // Partitioning that changes rounding, recorded for the device-numerics reference.
  void record_attention_key_block(AttentionUse use, std::uint32_t key_block);
  void record_gemm_inner_block(model::GemmRole role, std::uint32_t inner_block);
  // A split LayerNorm and its column part; a GELU with FP8 output (both kept in the plan).
  void record_norm_part(const std::string& op_name, NormUse use, std::uint32_t part_width);
  void record_fp8_output_gelu(const std::string& op_name);
  // The grids used, per op: the plan `compile --write-plan` exports (a GEMM with its
  // gemm_tile_bytes, of which Lowered keeps the largest).
  void record_gemm_grid(const std::string& op_name, const GemmGrid& grid, std::uint64_t tile_bytes);
  void record_attention_grid(const std::string& op_name, const AttentionGrid& grid);
  // An attention op lowered with FP8 products: in the plan and in the recorded numerics.
  void record_fp8_attention(const std::string& op_name);
  // The first tile of `op_name`'s cells (PlanPins::tile_offsets), recorded in the plan
  // when not 0; a pin of tiles() or more is a usage error naming the op.
  std::uint32_t tile_offset(const std::string& op_name);

  void place_input();
  // The output's binding; the lowered program before the program passes (compile.cpp).
  Lowered finish();

 private:
  Lowered out_;
  std::vector<std::optional<Distribution>> dists_;
  std::uint32_t op_index_ = 0;
  bool in_loop_ = false;
  std::uint32_t next_home_tile_ = 0;
  std::vector<std::uint32_t> created_in_step_;  // per allocation: lifetime of one never used
};

// A kernel call of `kind` on `tile` with its dims by name (compiler/kernel_table.hpp).
KernelCall kernel_call(KernelKind kind, std::uint32_t tile, std::initializer_list<std::pair<Dim, std::uint32_t>> dims,
                       std::vector<Operand> operands);
// `kind` (cast_fp8, gelu_f8: f16 in, FP8 out at the cast's role scale) on every block of
// `in`, into new FP8 blocks on the same tiles: the cast op's output (lower_ops.cpp).
void lower_fp8_output(LoweringContext& cx, const Distribution& in, KernelKind kind, const Op& cast);
// A block's whole allocation as an operand of `dtype` elements.
Operand whole_block(LoweringContext& cx, const Block& b, DType dtype, std::uint32_t stride = 0);

}  // namespace tilevit::compiler

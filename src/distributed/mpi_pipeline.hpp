#pragma once
// A pipeline run over MPI (OpenMPI): one rank per chip, or per run of contiguous chips
// when there are fewer ranks than chips. At a stage boundary between ranks the residual
// stream goes from rank to rank as FP16 bits with the pipeline clock; every rank then
// agrees on the call's end (the maximum clock), bulk-synchronously, so the cycles are the
// same at any rank count; rank 0 gathers the output (docs/SCALE_OUT.md).
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "mpi/mpi_world.hpp"
#include "system/pipeline_device.hpp"

namespace tilevit::distributed {

// The last chip's output, from the rank running it (`owner`) to rank 0: the values on
// rank 0, else empty.
std::vector<float> output_to_rank0(const mpi::World& world, const std::vector<float>& output, int owner,
                                   std::size_t values);

// Chips [first, end) of `rank` among `ranks`: contiguous, as even as possible, the first
// ranks taking the extra chips. Throws Error(kExitUsage) when ranks > chips.
std::pair<std::uint32_t, std::uint32_t> chips_of_rank(int rank, int ranks, std::uint32_t chips);
int rank_of_chip(std::uint32_t chip, int ranks, std::uint32_t chips);

// The boundary between this rank's chips and its neighbours' (MPI_Send / MPI_Recv).
class MpiBoundary : public system::StageBoundary {
 public:
  MpiBoundary(const mpi::World& world, std::uint32_t chips) : world_(world), chips_(chips) {}
  void send(std::uint32_t to_chip, const std::vector<std::uint16_t>& stream, std::uint64_t clock) override;
  std::vector<std::uint16_t> receive(std::uint32_t from_chip, std::size_t values, std::uint64_t& clock) override;

 private:
  const mpi::World& world_;
  std::uint32_t chips_;
};

// The chips of this rank as a run job's Runner: the stream crosses to the neighbouring
// ranks, every rank agrees on a call's cycles (the maxima over the ranks: the last
// chip's), and rank 0 gets the output (the other ranks an empty one).
class MpiPipelineRunner : public device::Runner {
 public:
  MpiPipelineRunner(const mpi::World& world, const system::CompiledPipeline& pipeline);
  void upload_weights(const model::ViTWeights& weights) override { device_.upload_weights(weights); }
  device::CallResult call(const std::vector<std::vector<float>>& images) override;

 private:
  const mpi::World& world_;
  std::uint32_t chips_;
  MpiBoundary boundary_;
  system::PipelineDevice device_;
  int last_rank_;
  std::size_t output_values_;  // of a call, on the last chip
};

}  // namespace tilevit::distributed

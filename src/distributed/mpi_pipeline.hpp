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

#include "system/pipeline_device.hpp"

namespace tilevit::distributed {

// Whether this process was started by mpirun (OpenMPI's environment), so `tilevit run`
// takes the MPI path without --mpi.
bool started_by_mpirun();

// MPI_Init on construction (once per process), MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  // Ends every rank with `exit_code` (a rank's error must not leave the others waiting).
  [[noreturn]] void abort(int exit_code) const;
  void barrier() const;
  std::uint64_t max_clock(std::uint64_t clock) const;
  // The last chip's output, from the rank running it to rank 0 (values on rank 0, else empty).
  std::vector<float> output_to_rank0(const std::vector<float>& output, int owner, std::size_t values) const;

 private:
  int rank_ = 0, ranks_ = 1;
};

// Chips [first, end) of `rank` among `ranks`: contiguous, as even as possible, the first
// ranks taking the extra chips. Throws Error(kExitUsage) when ranks > chips.
std::pair<std::uint32_t, std::uint32_t> chips_of_rank(int rank, int ranks, std::uint32_t chips);
int rank_of_chip(std::uint32_t chip, int ranks, std::uint32_t chips);

// The boundary between this rank's chips and its neighbours' (MPI_Send / MPI_Recv).
class MpiBoundary : public system::StageBoundary {
 public:
  MpiBoundary(int ranks, std::uint32_t chips) : ranks_(ranks), chips_(chips) {}
  void send(std::uint32_t to_chip, const std::vector<std::uint16_t>& stream, std::uint64_t clock) override;
  std::vector<std::uint16_t> receive(std::uint32_t from_chip, std::size_t values, std::uint64_t& clock) override;

 private:
  int ranks_;
  std::uint32_t chips_;
};

}  // namespace tilevit::distributed

#include "distributed/mpi_pipeline.hpp"

#include <mpi.h>

#include <cstdlib>

#include "support/error.hpp"

namespace tilevit::distributed {
namespace {

constexpr int kStreamTag = 23, kClockTag = 24, kOutputTag = 25;

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw Error(std::string("MPI: ") + what + " failed", kExitResource);
}

}  // namespace

bool started_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

MpiSession::MpiSession() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) check(MPI_Init(nullptr, nullptr), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
}

MpiSession::~MpiSession() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

void MpiSession::abort(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

void MpiSession::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

std::uint64_t MpiSession::max_clock(std::uint64_t clock) const {
  std::uint64_t result = 0;
  check(MPI_Allreduce(&clock, &result, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return result;
}

std::vector<float> MpiSession::output_to_rank0(const std::vector<float>& output, int owner, std::size_t values) const {
  if (owner == 0) return rank_ == 0 ? output : std::vector<float>{};
  if (rank_ == owner) check(MPI_Send(output.data(), int(values), MPI_FLOAT, 0, kOutputTag, MPI_COMM_WORLD), "MPI_Send");
  if (rank_ != 0) return {};
  std::vector<float> received(values);
  check(MPI_Recv(received.data(), int(values), MPI_FLOAT, owner, kOutputTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return received;
}

std::pair<std::uint32_t, std::uint32_t> chips_of_rank(int rank, int ranks, std::uint32_t chips) {
  if (ranks < 1 || std::uint32_t(ranks) > chips)
    throw Error("mpirun -np " + std::to_string(ranks) + ": more ranks than the machine's " + std::to_string(chips) +
                    " chips (give at most " + std::to_string(chips) + ")",
                kExitUsage);
  const std::uint32_t r = std::uint32_t(rank), n = std::uint32_t(ranks), base = chips / n, extra = chips % n;
  const std::uint32_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

int rank_of_chip(std::uint32_t chip, int ranks, std::uint32_t chips) {
  for (int r = 0; r < ranks; ++r) {
    const auto [first, end] = chips_of_rank(r, ranks, chips);
    if (chip >= first && chip < end) return r;
  }
  throw Error("MPI: chip " + std::to_string(chip) + " has no rank", kExitInternal);
}

void MpiBoundary::send(std::uint32_t to_chip, const std::vector<std::uint16_t>& stream, std::uint64_t clock) {
  const int to = rank_of_chip(to_chip, ranks_, chips_);
  check(MPI_Send(stream.data(), int(stream.size()), MPI_UINT16_T, to, kStreamTag, MPI_COMM_WORLD), "MPI_Send");
  check(MPI_Send(&clock, 1, MPI_UINT64_T, to, kClockTag, MPI_COMM_WORLD), "MPI_Send");
}

std::vector<std::uint16_t> MpiBoundary::receive(std::uint32_t from_chip, std::size_t values, std::uint64_t& clock) {
  const int from = rank_of_chip(from_chip, ranks_, chips_);
  std::vector<std::uint16_t> stream(values);
  check(MPI_Recv(stream.data(), int(values), MPI_UINT16_T, from, kStreamTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  check(MPI_Recv(&clock, 1, MPI_UINT64_T, from, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return stream;
}

}  // namespace tilevit::distributed

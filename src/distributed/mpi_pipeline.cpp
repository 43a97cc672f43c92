#include "distributed/mpi_pipeline.hpp"

#include <algorithm>

#include "support/error.hpp"

namespace tilevit::distributed {
namespace {

constexpr int kStreamTag = 23, kClockTag = 24, kOutputTag = 25;

}  // namespace

std::vector<float> output_to_rank0(const mpi::World& world, const std::vector<float>& output, int owner,
                                   std::size_t values) {
  if (owner == 0) return world.rank() == 0 ? output : std::vector<float>{};
  if (world.rank() == owner) world.send(0, kOutputTag, output.data(), values * sizeof(float));
  if (world.rank() != 0) return {};
  std::vector<float> received(values);
  world.receive(owner, kOutputTag, received.data(), values * sizeof(float));
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
  const int to = rank_of_chip(to_chip, world_.size(), chips_);
  world_.send(to, kStreamTag, stream.data(), stream.size() * sizeof(std::uint16_t));
  world_.send(to, kClockTag, &clock, sizeof clock);
}

std::vector<std::uint16_t> MpiBoundary::receive(std::uint32_t from_chip, std::size_t values, std::uint64_t& clock) {
  const int from = rank_of_chip(from_chip, world_.size(), chips_);
  std::vector<std::uint16_t> stream(values);
  world_.receive(from, kStreamTag, stream.data(), values * sizeof(std::uint16_t));
  world_.receive(from, kClockTag, &clock, sizeof clock);
  return stream;
}

MpiPipelineRunner::MpiPipelineRunner(const mpi::World& world, const system::CompiledPipeline& pipeline)
    : world_(world),
      chips_(std::uint32_t(pipeline.stages.size())),
      boundary_(world, chips_),
      device_(pipeline, chips_of_rank(world.rank(), world.size(), chips_).first,
              chips_of_rank(world.rank(), world.size(), chips_).second, &boundary_),
      last_rank_(rank_of_chip(chips_ - 1, world.size(), chips_)),
      output_values_(pipeline.stages.front().executable.config.output_values_per_image() *
                     std::size_t(pipeline.stages.front().executable.config.batch) * pipeline.micro_batches) {}

device::CallResult MpiPipelineRunner::call(const std::vector<std::vector<float>>& images) {
  device::CallResult result = device_.call(images);
  result.cycles = world_.max(result.cycles);
  result.first_cycles = world_.max(result.first_cycles);
  result.output = output_to_rank0(world_, result.output, last_rank_, output_values_);
  return result;
}

}  // namespace tilevit::distributed

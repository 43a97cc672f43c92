#include "mpi/mpi_world.hpp"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "support/error.hpp"

namespace tilevit::mpi {
namespace {

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw Error(std::string(what) + " failed", kExitResource);
}

int byte_count(std::size_t bytes) {
  if (bytes > std::size_t(INT_MAX)) throw Error("MPI: message of " + std::to_string(bytes) + " bytes is over 2^31", kExitInternal);
  return int(bytes);
}

}  // namespace

bool started_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

namespace {
int environment_number(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && v >= 0 && v < 1 << 24 ? int(v) : fallback;
}
}  // namespace

int mpirun_ranks() { return environment_number("OMPI_COMM_WORLD_SIZE", 1); }
int mpirun_rank() { return environment_number("OMPI_COMM_WORLD_RANK", 0); }

World::World() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) check(MPI_Init(nullptr, nullptr), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

World::~World() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

void World::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void World::abort(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

std::uint64_t World::max(std::uint64_t value) const {
  std::uint64_t result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return result;
}

void World::send(int to, int tag, const void* data, std::size_t bytes) const {
  check(MPI_Send(data, byte_count(bytes), MPI_BYTE, to, tag, MPI_COMM_WORLD), "MPI_Send");
}

void World::receive(int from, int tag, void* data, std::size_t bytes) const {
  check(MPI_Recv(data, byte_count(bytes), MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
}

}  // namespace tilevit::mpi

#include "mpi/mpi_world.hpp"

#include <mpi.h>

#include <cstdlib>

#include "support/error.hpp"

namespace tilevit::mpi {

World::World() {
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw Error("MPI_Init failed", kExitResource);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

World::~World() { MPI_Finalize(); }

void World::barrier() const {
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) throw Error("MPI_Barrier failed", kExitResource);
}

void World::abort(int exit_code) const {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace tilevit::mpi

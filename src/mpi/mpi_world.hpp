#pragma once
// The MPI world of one process, kept behind this interface so that mpi.h and the MPI
// library stay in this library (sweeps and the pipeline over ranks both use it):
// initialised on construction unless already, finalised on destruction (a process
// started without mpirun is a world of one rank).
#include <cstddef>
#include <cstdint>

namespace tilevit::mpi {

// Whether this process was started by mpirun (OpenMPI's environment).
bool started_by_mpirun();
// From OpenMPI's environment, without any MPI call: the ranks mpirun started
// (OMPI_COMM_WORLD_SIZE; 1 without mpirun) and this process's rank (OMPI_COMM_WORLD_RANK; 0).
int mpirun_ranks();
int mpirun_rank();

class World {
 public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Waits until every rank arrives.
  void barrier() const;
  // Ends every rank with `exit_code` (a rank that cannot go on while others wait for it
  // at a barrier). Does not return.
  [[noreturn]] void abort(int exit_code) const;
  // The maximum of `value` over every rank (each rank gets it).
  std::uint64_t max(std::uint64_t value) const;
  // Blocking point-to-point bytes; `tag` pairs a send with its receive.
  void send(int to, int tag, const void* data, std::size_t bytes) const;
  void receive(int from, int tag, void* data, std::size_t bytes) const;

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace tilevit::mpi

#pragma once
// The MPI world of one process, kept behind this interface so that mpi.h and the MPI
// library stay in this library: initialised on construction, finalised on destruction
// (a process started without mpirun is a world of one rank).
#include <string>

namespace tilevit::mpi {

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

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace tilevit::mpi

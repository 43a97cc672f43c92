#include "support/threads.hpp"

#include <omp.h>

#include <algorithm>
#include <thread>

namespace tilevit {

void set_host_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(threads);
}

int host_threads() { return omp_get_max_threads(); }

}  // namespace tilevit

#pragma once
#include <algorithm>
#include <vector>

namespace tilevit {

// The median of `values` (the mean of the two middle ones for an even count); 0 if empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace tilevit

#include "reference/compare.hpp"

#include <algorithm>
#include <cmath>

namespace tilevit::reference {

double cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0;
  return dot / std::sqrt(na * nb);
}

Comparison compare_embeddings(const std::vector<float>& a, const std::vector<float>& b, int width) {
  Comparison c;
  const std::size_t n = a.size() / width;
  c.min_cosine = 1;
  for (std::size_t i = 0; i < n; ++i) {
    std::span<const float> ea(a.data() + i * width, width), eb(b.data() + i * width, width);
    double cos = cosine(ea, eb);
    for (int j = 0; j < width; ++j) {
      if (!std::isfinite(ea[j])) c.all_finite = false;
      c.max_abs_error = std::max(c.max_abs_error, std::fabs(static_cast<double>(ea[j]) - eb[j]));
      c.max_reference_magnitude = std::max(c.max_reference_magnitude, std::fabs(static_cast<double>(eb[j])));
    }
    if (!std::isfinite(cos)) cos = 0;
    c.cosines.push_back(cos);
    c.min_cosine = std::min(c.min_cosine, cos);
  }
  if (!c.all_finite) c.min_cosine = 0;
  return c;
}

}  // namespace tilevit::reference

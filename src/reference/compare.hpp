#pragma once
// Comparing embeddings: cosine similarity (in double) and absolute error.
#include <span>
#include <vector>

namespace tilevit::reference {

double cosine(std::span<const float> a, std::span<const float> b);

struct Comparison {
  std::vector<double> cosines;  // one per embedding
  double min_cosine = 0;
  double max_abs_error = 0;
  double max_reference_magnitude = 0;
  bool all_finite = true;
};

// a and b are [batch][width]; the reference is b.
Comparison compare_embeddings(const std::vector<float>& a, const std::vector<float>& b, int width);

}  // namespace tilevit::reference

#include "model/random_model.hpp"

#include <cmath>
#include <numbers>

#include "support/error.hpp"

namespace tilevit::model {
namespace {

inline std::uint64_t splitmix64_next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 0x100000001B3ull;
  }
  return h;
}

void fill_normal(std::uint64_t stream, float scale, std::span<float> out) {
  const std::int64_t n = static_cast<std::int64_t>(out.size());
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] = seeded_normal(stream, static_cast<std::uint64_t>(i)) * scale;
}

}  // namespace

float seeded_normal(std::uint64_t stream_seed, std::uint64_t index) {
  std::uint64_t state = stream_seed ^ index;
  const std::uint64_t a = splitmix64_next(state);
  const std::uint64_t b = splitmix64_next(state);
  // 24-bit uniforms (exact in float): u1 in (0, 1], u2 in [0, 1). Single precision
  // keeps the 428 M draws of the full model to about a second per core.
  const float u1 = static_cast<float>((a >> 40) + 1) * 0x1.0p-24f;
  const float u2 = static_cast<float>(b >> 40) * 0x1.0p-24f;
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958648f * u2);
}

std::uint64_t tensor_stream_seed(std::uint64_t seed, const std::string& name) {
  std::uint64_t state = seed ^ fnv1a64(name);
  return splitmix64_next(state);
}

RandomModelSource::RandomModelSource(const ViTConfig& config, std::uint64_t seed)
    : seed_(seed), tensors_(checkpoint_tensors(config)) {
  for (std::size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

std::string RandomModelSource::describe() const { return "random model (seed " + std::to_string(seed_) + ")"; }

std::optional<TensorInfo> RandomModelSource::info(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return TensorInfo{name, DType::F32, tensors_[it->second].shape};
}

void RandomModelSource::read_f32(const std::string& name, std::span<float> out) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw Error(describe() + ": no tensor " + name, kExitInternal);
  const CheckpointTensor& t = tensors_[it->second];
  const TensorInfo meta{name, DType::F32, t.shape};
  if (static_cast<std::int64_t>(out.size()) != meta.elements())
    throw Error(describe() + ": " + name + ": output size mismatch", kExitInternal);
  const std::uint64_t stream = tensor_stream_seed(seed_, name);
  switch (t.init) {
    case InitKind::GemmWeight:
      fill_normal(stream, static_cast<float>(std::sqrt(2.0 / (t.fan_in + t.fan_out))), out);
      break;
    case InitKind::Bias:
      fill_normal(stream, 1e-6f, out);
      break;
    case InitKind::LayerNormScale:
      std::fill(out.begin(), out.end(), 1.0f);
      break;
    case InitKind::PositionEmbedding:
      fill_normal(stream, static_cast<float>(1.0 / std::sqrt(static_cast<double>(t.shape.back()))), out);
      break;
    case InitKind::Probe:
      fill_normal(stream, static_cast<float>(std::sqrt(1.0 / static_cast<double>(t.shape.back()))), out);
      break;
    case InitKind::VisibleBias:
      fill_normal(stream, 0.1f, out);
      break;
    case InitKind::VisibleScale:  // 1 + 0.1 N(0, 1)
      fill_normal(stream, 0.1f, out);
      for (float& v : out) v += 1.0f;
      break;
  }
}

std::vector<float> random_image(const ViTConfig& config, std::uint64_t seed, int b) {
  std::vector<float> pixels(static_cast<std::size_t>(3) * config.image_size * config.image_size);
  fill_normal(tensor_stream_seed(seed, "image." + std::to_string(b)), 0.5f, pixels);
  return pixels;
}

}  // namespace tilevit::model

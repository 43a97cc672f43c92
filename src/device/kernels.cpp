// One kernel call on one tile: operands read from the tile's SRAM, the arithmetic of
// numerics/device_kernels, the result written back. One executor per kernel kind, indexed
// like the kernel table (compiler/kernel_table.hpp), whose signature gives every operand's
// bytes.
#include "device/kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>

#include "device/prefetch.hpp"
#include "numerics/device_kernels.hpp"

namespace tilevit::device {

using compiler::KernelKind;

namespace {

// Per-thread scratch, reused across calls: the full model makes ~1.4 M kernel calls per
// inference, and fresh buffers each time cost more in page faults than the arithmetic.
// Each buffer starts on a cache line (numerics::line_aligned): the GEMMs' B and P.V's V
// are loaded a whole line per vector.
struct Scratch {
  std::vector<float> buffers[6];
  float* get(int i, std::size_t n) { return numerics::line_aligned(buffers[i], n); }
};
thread_local Scratch scratch;

// The F143 decode table of one scale, per thread: kernel calls of a step share a scale.
const float* decode_table(int scale) {
  thread_local int cached = INT32_MIN;
  thread_local std::array<float, 256> table;
  if (scale != cached) table = numerics::fp8_decode_table(numerics::Fp8Format::F143, scale), cached = scale;
  return table.data();
}

// Kernels that stream from SRAM to SRAM without a full copy need disjoint operands.
bool overlaps(const std::uint8_t* a, std::size_t na, const std::uint8_t* b, std::size_t nb) {
  return a < b + nb && b < a + na;
}
// An element-wise kernel may also write its output over an input of the same extent.
bool in_place_or_apart(const std::uint8_t* out, const std::uint8_t* in, std::size_t bytes) {
  return out == in || !overlaps(out, bytes, in, bytes);
}
// Tile memory a kernel may use as floats in place (FP32 operands are 4 B aligned in practice).
bool aligned_floats(const std::uint8_t* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(float) == 0; }
// Tile memory holding binary16 values.
const std::uint16_t* u16(const std::uint8_t* p) { return reinterpret_cast<const std::uint16_t*>(p); }
std::uint16_t* u16(std::uint8_t* p) { return reinterpret_cast<std::uint16_t*>(p); }


// One call being executed: its operands resolved in tile memory, its dims by name, and
// scratch buffers handed out in order.
class KernelRun {
 public:
  KernelRun(const target::MachineDescription& m, const compiler::CompiledProgram& p, std::span<std::uint8_t> sram,
            const compiler::KernelCall& call, std::uint32_t step, std::uint32_t iteration)
      : call(call), shape(call.shape()), m_(m), p_(p), sram_(sram), iteration_(iteration),
        ctx_{call.tile, step, p.steps[step].label.c_str(), compiler::kernel_name(call.kind)} {}

  const compiler::KernelCall& call;
  const compiler::KernelShape shape;

  std::size_t dim(compiler::Dim d) const { return shape[d]; }
  // Operand i's bytes: its kind's signature's, as the Device checked once per call
  // (device.cpp, check_signature).
  std::size_t bytes(std::size_t i) const { return call.operands[i].bytes; }
  std::uint8_t* operand(std::size_t i) const {
    const compiler::Operand& o = call.operands[i];
    if (o.allocation >= p_.allocations.size() || p_.allocations[o.allocation].tile != call.tile)
      throw Error(describe(ctx_) + ": operand " + std::to_string(i) + " is not in this tile's memory", kExitInternal);
    const std::uint64_t address =
        std::uint64_t(p_.allocations[o.allocation].address) + o.offset + std::uint64_t(o.layer_stride) * iteration_;
    return sram_at(sram_, m_, address, o.bytes, ctx_);
  }

  struct Buf {
    float* p;
    std::size_t n;
    float* data() const { return p; }
    std::size_t size() const { return n; }
    float& operator[](std::size_t i) const { return p[i]; }
  };
  Buf buf(std::size_t n) {
    const int i = next_buffer_++;
    return Buf{scratch.get(i, n), n};
  }

 private:
  const target::MachineDescription& m_;
  const compiler::CompiledProgram& p_;
  std::span<std::uint8_t> sram_;
  std::uint32_t iteration_;
  AccessContext ctx_;
  int next_buffer_ = 0;
};
using Buf = KernelRun::Buf;
using compiler::Dim;

void run_gemm(KernelRun& k) {
  const bool fp8 = k.call.kind == KernelKind::gemm_fp8;
  const std::size_t rows = k.dim(Dim::rows), inner = k.dim(Dim::inner), cols = k.dim(Dim::cols), es = fp8 ? 1 : 2;
  const std::uint8_t* a_bytes = k.operand(0);
  const std::uint8_t* b_bytes = k.operand(1);
  std::uint8_t* c_bytes = k.operand(2);
  auto decode = [&](const std::uint8_t* in, float* out, std::size_t n) {
    if (fp8)
      load_f8(in, out, n, k.call.scale);
    else
      load_f16(in, out, n);
  };
  const Buf b = k.buf(inner * cols);
  decode(b_bytes, b.data(), b.size());
  // A block of rows at a time, their C rows stored right after, so C stays in L1.
  // FP8 A is read as codes straight from tile memory through the decode table (the
  // same values as decoding it first, without the decoding); FP16 A, or an A that
  // the output overlaps, is decoded (for an overlap: all of it before C is written).
  // Rows are independent, so blocking them changes no result.
  const bool overlap = overlaps(a_bytes, k.bytes(0), c_bytes, k.bytes(2));
  const bool codes = fp8 && !overlap;
  const std::size_t block = overlap ? rows : cols <= 16 ? 48 : 24;
  const Buf a = k.buf(codes ? 0 : std::min(rows, block) * inner), c = k.buf(std::min(rows, block) * cols);
  const float* table = codes ? decode_table(k.call.scale) : nullptr;
  // C goes straight from the registers to the tile as binary16 (its bytes are never
  // read by this call: A and B are in scratch or, as codes, apart from C).
  const bool direct = reinterpret_cast<std::uintptr_t>(c_bytes) % 2 == 0;
  for (std::size_t r0 = 0; r0 < rows; r0 += block) {
    const std::size_t n = std::min(block, rows - r0);
    if (!codes) decode(a_bytes + r0 * inner * es, a.data(), n * inner);
    numerics::DeviceGemm g{static_cast<int>(n), static_cast<int>(cols), static_cast<int>(inner),
                           a.data(), static_cast<int>(inner), b.data(), static_cast<int>(cols),
                           c.data(), static_cast<int>(cols), fp8 ? 32 : 0, true};
    if (codes) g.a_codes = a_bytes + r0 * inner, g.a_table = table;
    if (direct) g.c_fp16 = u16(c_bytes) + r0 * cols, g.ldc_fp16 = static_cast<int>(cols);
    prefetch_lines(c_bytes + r0 * cols * 2, n * cols * 2);  // the line reads overlap the FMAs
    numerics::device_gemm(g);
    if (!direct) store_f16(c_bytes + r0 * cols * 2, c.data(), n * cols);
  }
}

void run_reduce_add(KernelRun& k) {
  const std::size_t n = k.dim(Dim::count), parts = k.dim(Dim::partials);
  // Straight from and to the tile's binary16 bytes (no decoded copy of the partials),
  // unless the output overlaps the partials (then through a copy).
  const std::uint8_t* in = k.operand(0);
  std::uint8_t* out = k.operand(1);
  if (!overlaps(in, n * parts * 2, out, n * 2)) {
    numerics::device_reduce_add_fp16(u16(in), static_cast<int>(parts), n, u16(out));
    return;
  }
  const Buf partials = k.buf(n * parts), sum = k.buf(n);
  load_f16(in, partials.data(), partials.size());
  numerics::device_reduce_add(partials.data(), static_cast<int>(parts), n, sum.data());
  store_f16(out, sum.data(), n);
}

void run_bias_add(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::rows), cols = k.dim(Dim::cols), n = rows * cols;
  const std::uint8_t* in = k.operand(0);
  const std::uint8_t* bias = k.operand(1);
  std::uint8_t* out = k.operand(2);
  // Straight on the tile's binary16 bytes unless the output overlaps an operand other
  // than in place; then through copies.
  if (in_place_or_apart(out, in, n * 2) && !overlaps(bias, cols * 2, out, n * 2)) {
    for (std::size_t r = 0; r < rows; ++r) numerics::device_add_fp16(u16(in) + r * cols, u16(bias), u16(out) + r * cols, cols);
    return;
  }
  const Buf x = k.buf(n), b = k.buf(cols);
  load_f16(in, x.data(), n);
  load_f16(bias, b.data(), cols);
  for (std::size_t r = 0; r < rows; ++r) numerics::device_add(&x[r * cols], b.data(), &x[r * cols], cols);
  store_f16(out, x.data(), n);
}

void run_add(KernelRun& k) {
  const std::size_t n = k.dim(Dim::count);
  const std::uint8_t* in_a = k.operand(0);
  const std::uint8_t* in_b = k.operand(1);
  std::uint8_t* out = k.operand(2);
  if (in_place_or_apart(out, in_a, n * 2) && in_place_or_apart(out, in_b, n * 2)) {
    numerics::device_add_fp16(u16(in_a), u16(in_b), u16(out), n);
    return;
  }
  const Buf a = k.buf(n), b = k.buf(n);
  load_f16(in_a, a.data(), n);
  load_f16(in_b, b.data(), n);
  numerics::device_add(a.data(), b.data(), a.data(), n);
  store_f16(out, a.data(), n);
}

void run_layernorm(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::rows), width = k.dim(Dim::width);
  const Buf x = k.buf(rows * width), g = k.buf(width), b = k.buf(width), y = k.buf(rows * width);
  load_f16(k.operand(0), x.data(), x.size());
  load_f16(k.operand(1), g.data(), width);
  load_f16(k.operand(2), b.data(), width);
  for (std::size_t r = 0; r < rows; ++r)
    numerics::device_layernorm_row(&x[r * width], g.data(), b.data(), &y[r * width], static_cast<int>(width), k.call.param);
  store_f16(k.operand(3), y.data(), y.size());
}

// Split LayerNorm, one column part of `rows` rows: {mean, M2} per row (FP32).
void run_layer_norm_moments(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::rows), cols = k.dim(Dim::cols);
  const Buf x = k.buf(rows * cols), m = k.buf(rows * 2);
  load_f16(k.operand(0), x.data(), x.size());
  for (std::size_t r = 0; r < rows; ++r) numerics::device_layernorm_moments(&x[r * cols], static_cast<int>(cols), &m[r * 2]);
  store_f32(k.operand(1), m.data(), m.size());
}

// Every part's moments of the block's rows ([parts][rows][2]) combined in part order,
// then the block's part of each row normalised, scaled and shifted.
void run_layer_norm_apply(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::rows), cols = k.dim(Dim::cols), width = k.dim(Dim::width);
  const std::size_t part = k.dim(Dim::part_width), parts = (width + part - 1) / part;
  const Buf x = k.buf(rows * cols), m = k.buf(parts * rows * 2), g = k.buf(cols), b = k.buf(cols), y = k.buf(rows * cols);
  load_f16(k.operand(0), x.data(), x.size());
  load_f32(k.operand(1), m.data(), m.size());
  load_f16(k.operand(2), g.data(), cols);
  load_f16(k.operand(3), b.data(), cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const numerics::LayerNormParts s = numerics::combine_layernorm_moments(
        &m[r * 2], static_cast<int>(parts), rows * 2, static_cast<int>(width), static_cast<int>(part), k.call.param);
    numerics::device_layernorm_apply(&x[r * cols], g.data(), b.data(), &y[r * cols], static_cast<int>(cols), s);
  }
  store_f16(k.operand(4), y.data(), y.size());
}

// The tanh GELU with FP8 output: the GELU's FP16 values, then the cast's encoding.
void run_gelu_f8(KernelRun& k) {
  const std::size_t n = k.dim(Dim::count);
  const Buf x = k.buf(n);
  load_f16(k.operand(0), x.data(), n);
  numerics::device_gelu(x.data(), x.data(), n);
  numerics::fp8_encode(x.data(), k.operand(1), n, numerics::Fp8Format::F143, k.call.scale);
}

// An element-wise activation f16 -> f16 through a float copy (in place or apart).
template <void (*Activation)(const float*, float*, std::size_t)>
void run_activation(KernelRun& k) {
  const std::size_t n = k.dim(Dim::count);
  const Buf x = k.buf(n);
  load_f16(k.operand(0), x.data(), n);
  Activation(x.data(), x.data(), n);
  store_f16(k.operand(1), x.data(), n);
}

void run_scale_columns(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::rows), cols = k.dim(Dim::cols), n = rows * cols;
  const Buf x = k.buf(n), scale = k.buf(cols);
  load_f16(k.operand(0), x.data(), n);
  load_f16(k.operand(1), scale.data(), cols);
  for (std::size_t r = 0; r < rows; ++r) numerics::device_multiply(&x[r * cols], scale.data(), &x[r * cols], cols);
  store_f16(k.operand(2), x.data(), n);
}

void run_cast_fp8(KernelRun& k) {
  // In L1-sized pieces (element-wise, so any piece size gives the same bytes); an
  // output overlapping the input other than in place goes in one piece.
  const std::size_t n = k.dim(Dim::count);
  const std::uint8_t* in = k.operand(0);
  std::uint8_t* out = k.operand(1);
  const std::size_t piece = in == out || !overlaps(in, n * 2, out, n) ? 2048 : std::max<std::size_t>(n, 1);
  const Buf x = k.buf(std::min(n, piece));
  for (std::size_t i = 0; i < n; i += piece) {
    const std::size_t m = std::min(piece, n - i);
    load_f16(in + i * 2, x.data(), m);
    numerics::fp8_encode(x.data(), out + i, m, numerics::Fp8Format::F143, k.call.scale);
  }
}

// FP8 attention products (attention_*_fp8): F143 operands at the call's scale.
bool fp8_attention(const KernelRun& k) {
  return k.call.kind == KernelKind::attention_scores_fp8 || k.call.kind == KernelKind::attention_values_fp8;
}

void run_attention_scores(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::queries), keys = k.dim(Dim::keys), hd = k.dim(Dim::head_dim);
  const Buf q = k.buf(rows * hd), kb = k.buf(keys * hd);
  const bool fp8 = fp8_attention(k);
  if (fp8) {
    load_f8(k.operand(0), q.data(), q.size(), k.call.scale);
    load_f8(k.operand(1), kb.data(), kb.size(), k.call.scale);
  } else {
    load_f16(k.operand(0), q.data(), q.size());
    load_f16(k.operand(1), kb.data(), kb.size());
  }
  std::uint8_t* scores = k.operand(2);
  std::uint8_t* maxima = k.operand(3);
  const auto scores_into = [&](float* s, float* mx) {
    numerics::device_attention_scores(q.data(), static_cast<int>(hd), kb.data(), static_cast<int>(hd), static_cast<int>(rows),
                                      static_cast<int>(keys), static_cast<int>(hd), k.call.param, s, mx,
                                      numerics::AttentionPrecision{fp8});
  };
  // Key-major scores straight into tile memory when it holds aligned floats (its lines
  // fetched first: the GEMM's stores and the scale pass then hit), else through scratch
  // and a copy.
  if (aligned_floats(scores) && aligned_floats(maxima) && !overlaps(scores, rows * keys * 4, maxima, rows * 4)) {
    prefetch_lines(scores, rows * keys * 4);
    scores_into(reinterpret_cast<float*>(scores), reinterpret_cast<float*>(maxima));
    return;
  }
  const Buf s = k.buf(rows * keys), mx = k.buf(rows);
  scores_into(s.data(), mx.data());
  store_f32(scores, s.data(), s.size());
  store_f32(maxima, mx.data(), rows);
}

void run_attention_values(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::queries), keys = k.dim(Dim::keys), hd = k.dim(Dim::head_dim);
  const std::size_t blocks = k.dim(Dim::key_blocks);
  // V's rows padded to whole 64 B lines (head dim 72 = 4.5 lines): the P.V product's row
  // loads then never split a cache line.
  const std::size_t ldv = (hd + 15) / 16 * 16;
  const Buf p = k.buf(rows * keys), maxima = k.buf(blocks * rows), v = k.buf(keys * ldv), row_max = k.buf(rows);
  std::fill(row_max.data(), row_max.data() + rows, -INFINITY);
  // The scores read straight from tile memory when they are aligned floats, else from a copy.
  const std::uint8_t* in = k.operand(0);
  const float* s = reinterpret_cast<const float*>(in);
  if (!aligned_floats(in)) load_f32(in, p.data(), p.size()), s = p.data();
  load_f32(k.operand(1), maxima.data(), maxima.size());
  const bool fp8 = fp8_attention(k);
  if (fp8)
    for (std::size_t j = 0; j < keys; ++j) load_f8(k.operand(2) + j * hd, &v[j * ldv], hd, k.call.scale);
  else
    numerics::from_fp16_bits_rows(u16(k.operand(2)), hd, v.data(), ldv, keys, hd);
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < rows; ++i) row_max[i] = std::max(row_max[i], maxima[b * rows + i]);
  const Buf part = k.buf(rows * (hd + 1));
  numerics::device_attention_values(s, p.data(), row_max.data(), static_cast<int>(rows), static_cast<int>(keys), v.data(),
                                    static_cast<int>(ldv), static_cast<int>(hd), part.data(),
                                    numerics::AttentionPrecision{fp8});
  store_f32(k.operand(3), part.data(), part.size());
}

void run_attention_combine(KernelRun& k) {
  const std::size_t rows = k.dim(Dim::rows), hd = k.dim(Dim::head_dim), blocks = k.dim(Dim::key_blocks);
  const Buf parts = k.buf(blocks * rows * (hd + 1)), out = k.buf(rows * hd);
  load_f32(k.operand(0), parts.data(), parts.size());
  numerics::device_attention_combine(parts.data(), static_cast<int>(blocks), static_cast<int>(rows), static_cast<int>(hd),
                                     out.data(), static_cast<int>(hd));
  store_f16(k.operand(1), out.data(), out.size());
}

struct Executor {
  KernelKind kind;
  void (*run)(KernelRun&);
};
constexpr std::array<Executor, compiler::kKernelKinds> kExecutors = {{
    {KernelKind::gemm_fp8, run_gemm},
    {KernelKind::gemm_fp16, run_gemm},
    {KernelKind::reduce_add, run_reduce_add},
    {KernelKind::bias_add, run_bias_add},
    {KernelKind::add, run_add},
    {KernelKind::layernorm, run_layernorm},
    {KernelKind::gelu, run_activation<numerics::device_gelu>},
    {KernelKind::cast_fp8, run_cast_fp8},
    {KernelKind::attention_scores, run_attention_scores},
    {KernelKind::attention_values, run_attention_values},
    {KernelKind::attention_combine, run_attention_combine},
    {KernelKind::gelu_erf, run_activation<numerics::device_gelu_erf>},
    {KernelKind::quick_gelu, run_activation<numerics::device_quick_gelu>},
    {KernelKind::scale_columns, run_scale_columns},
    {KernelKind::attention_scores_fp8, run_attention_scores},
    {KernelKind::attention_values_fp8, run_attention_values},
    {KernelKind::layer_norm_moments, run_layer_norm_moments},
    {KernelKind::layer_norm_apply, run_layer_norm_apply},
    {KernelKind::gelu_f8, run_gelu_f8},
}};
constexpr bool one_executor_per_kind_in_order() {
  for (std::size_t i = 0; i < kExecutors.size(); ++i)
    if (static_cast<std::size_t>(kExecutors[i].kind) != i || kExecutors[i].run == nullptr) return false;
  return true;
}
static_assert(one_executor_per_kind_in_order(), "device: one executor per KernelKind, in enum order");

}  // namespace

void execute_call(const target::MachineDescription& m, const compiler::CompiledProgram& p,
                  std::span<std::uint8_t> sram, const compiler::KernelCall& call, std::uint32_t step,
                  std::uint32_t iteration) {
  KernelRun run(m, p, sram, call, step, iteration);
  kExecutors[static_cast<std::size_t>(call.kind)].run(run);
}

}  // namespace tilevit::device

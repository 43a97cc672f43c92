// One kernel call on one tile: operands read from the tile's SRAM, the arithmetic of
// numerics/device_kernels, the result written back. Operand order: program.hpp.
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

}  // namespace

void execute_call(const target::MachineDescription& m, const compiler::CompiledProgram& p,
                  std::span<std::uint8_t> sram, const compiler::KernelCall& call, std::uint32_t step,
                  std::uint32_t iteration) {
  AccessContext ctx{call.tile, step, p.steps[step].label.c_str(), compiler::kernel_name(call.kind)};
  auto operand = [&](std::size_t i, std::uint64_t bytes) -> std::uint8_t* {
    if (i >= call.operands.size()) throw Error(describe(ctx) + ": missing operand " + std::to_string(i), kExitInternal);
    const compiler::Operand& o = call.operands[i];
    if (o.allocation >= p.allocations.size() || p.allocations[o.allocation].tile != call.tile)
      throw Error(describe(ctx) + ": operand " + std::to_string(i) + " is not in this tile's memory", kExitInternal);
    if (bytes > o.bytes)
      throw Error(describe(ctx) + ": operand " + std::to_string(i) + " holds " + std::to_string(o.bytes) + " B, the kernel needs " +
                      std::to_string(bytes), kExitInternal);
    const std::uint64_t address =
        std::uint64_t(p.allocations[o.allocation].address) + o.offset + std::uint64_t(o.layer_stride) * iteration;
    return sram_at(sram, m, address, bytes, ctx);
  };
  const auto& d = call.dims;
  struct Buf {
    float* p;
    std::size_t n;
    float* data() const { return p; }
    std::size_t size() const { return n; }
    float& operator[](std::size_t i) const { return p[i]; }
  };
  int next = 0;
  auto buf = [&](std::size_t n) { const int i = next++; return Buf{scratch.get(i, n), n}; };
  switch (call.kind) {
    case KernelKind::gemm_fp8:
    case KernelKind::gemm_fp16: {
      const bool fp8 = call.kind == KernelKind::gemm_fp8;
      const std::size_t rows = d[0], inner = d[1], cols = d[2], es = fp8 ? 1 : 2;
      const std::uint8_t* a_bytes = operand(0, rows * inner * es);
      const std::uint8_t* b_bytes = operand(1, inner * cols * es);
      std::uint8_t* c_bytes = operand(2, rows * cols * 2);
      auto decode = [&](const std::uint8_t* in, float* out, std::size_t n) {
        if (fp8)
          load_f8(in, out, n, call.scale);
        else
          load_f16(in, out, n);
      };
      const Buf b = buf(inner * cols);
      decode(b_bytes, b.data(), b.size());
      // A block of rows at a time, their C rows stored right after, so C stays in L1.
      // FP8 A is read as codes straight from tile memory through the decode table (the
      // same values as decoding it first, without the decoding); FP16 A, or an A that
      // the output overlaps, is decoded (for an overlap: all of it before C is written).
      // Rows are independent, so blocking them changes no result.
      const bool overlap = overlaps(a_bytes, rows * inner * es, c_bytes, rows * cols * 2);
      const bool codes = fp8 && !overlap;
      const std::size_t block = overlap ? rows : cols <= 16 ? 48 : 24;
      const Buf a = buf(codes ? 0 : std::min(rows, block) * inner), c = buf(std::min(rows, block) * cols);
      const float* table = codes ? decode_table(call.scale) : nullptr;
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
      return;
    }
    case KernelKind::reduce_add: {
      const std::size_t n = d[0], parts = d[1];
      // Straight from and to the tile's binary16 bytes (no decoded copy of the partials),
      // unless the output overlaps the partials (then through a copy, as before).
      const std::uint8_t* in = operand(0, n * parts * 2);
      std::uint8_t* out = operand(1, n * 2);
      if (!overlaps(in, n * parts * 2, out, n * 2)) {
        numerics::device_reduce_add_fp16(u16(in), static_cast<int>(parts), n, u16(out));
        return;
      }
      const Buf partials = buf(n * parts), sum = buf(n);
      load_f16(in, partials.data(), partials.size());
      numerics::device_reduce_add(partials.data(), static_cast<int>(parts), n, sum.data());
      store_f16(out, sum.data(), n);
      return;
    }
    case KernelKind::bias_add: {
      const std::size_t rows = d[0], cols = d[1], n = rows * cols;
      const std::uint8_t* in = operand(0, n * 2);
      const std::uint8_t* bias = operand(1, cols * 2);
      std::uint8_t* out = operand(2, n * 2);
      // Straight on the tile's binary16 bytes unless the output overlaps an operand other
      // than in place; then through copies.
      if (in_place_or_apart(out, in, n * 2) && !overlaps(bias, cols * 2, out, n * 2)) {
        for (std::size_t r = 0; r < rows; ++r) numerics::device_add_fp16(u16(in) + r * cols, u16(bias), u16(out) + r * cols, cols);
        return;
      }
      const Buf x = buf(n), b = buf(cols);
      load_f16(in, x.data(), n);
      load_f16(bias, b.data(), cols);
      for (std::size_t r = 0; r < rows; ++r) numerics::device_add(&x[r * cols], b.data(), &x[r * cols], cols);
      store_f16(out, x.data(), n);
      return;
    }
    case KernelKind::add: {
      const std::size_t n = d[0];
      const std::uint8_t* in_a = operand(0, n * 2);
      const std::uint8_t* in_b = operand(1, n * 2);
      std::uint8_t* out = operand(2, n * 2);
      if (in_place_or_apart(out, in_a, n * 2) && in_place_or_apart(out, in_b, n * 2)) {
        numerics::device_add_fp16(u16(in_a), u16(in_b), u16(out), n);
        return;
      }
      const Buf a = buf(n), b = buf(n);
      load_f16(in_a, a.data(), n);
      load_f16(in_b, b.data(), n);
      numerics::device_add(a.data(), b.data(), a.data(), n);
      store_f16(out, a.data(), n);
      return;
    }
    case KernelKind::layernorm: {
      const std::size_t rows = d[0], width = d[1];
      const Buf x = buf(rows * width), g = buf(width), b = buf(width), y = buf(rows * width);
      load_f16(operand(0, x.size() * 2), x.data(), x.size());
      load_f16(operand(1, width * 2), g.data(), width);
      load_f16(operand(2, width * 2), b.data(), width);
      for (std::size_t r = 0; r < rows; ++r)
        numerics::device_layernorm_row(&x[r * width], g.data(), b.data(), &y[r * width], static_cast<int>(width), call.param);
      store_f16(operand(3, y.size() * 2), y.data(), y.size());
      return;
    }
    case KernelKind::gelu: {
      const std::size_t n = d[0];
      const Buf x = buf(n);
      load_f16(operand(0, n * 2), x.data(), n);
      numerics::device_gelu(x.data(), x.data(), n);
      store_f16(operand(1, n * 2), x.data(), n);
      return;
    }
    case KernelKind::cast_fp8: {
      // In L1-sized pieces (element-wise, so any piece size gives the same bytes); an
      // output overlapping the input other than in place goes in one piece.
      const std::size_t n = d[0];
      const std::uint8_t* in = operand(0, n * 2);
      std::uint8_t* out = operand(1, n);
      const std::size_t piece = in == out || !overlaps(in, n * 2, out, n) ? 2048 : std::max<std::size_t>(n, 1);
      const Buf x = buf(std::min(n, piece));
      for (std::size_t i = 0; i < n; i += piece) {
        const std::size_t m = std::min(piece, n - i);
        load_f16(in + i * 2, x.data(), m);
        numerics::fp8_encode(x.data(), out + i, m, numerics::Fp8Format::F143, call.scale);
      }
      return;
    }
    case KernelKind::attention_scores: {
      const std::size_t rows = d[0], keys = d[1], hd = d[2];
      const Buf q = buf(rows * hd), k = buf(keys * hd);
      load_f16(operand(0, q.size() * 2), q.data(), q.size());
      load_f16(operand(1, k.size() * 2), k.data(), k.size());
      std::uint8_t* scores = operand(2, rows * keys * 4);
      std::uint8_t* maxima = operand(3, rows * 4);
      // Key-major scores straight into tile memory when it holds aligned floats (its lines
      // fetched first: the GEMM's stores and the scale pass then hit), else through scratch
      // and a copy.
      if (aligned_floats(scores) && aligned_floats(maxima) && !overlaps(scores, rows * keys * 4, maxima, rows * 4)) {
        prefetch_lines(scores, rows * keys * 4);
        numerics::device_attention_scores(q.data(), static_cast<int>(hd), k.data(), static_cast<int>(hd), static_cast<int>(rows),
                                          static_cast<int>(keys), static_cast<int>(hd), call.param,
                                          reinterpret_cast<float*>(scores), reinterpret_cast<float*>(maxima));
        return;
      }
      const Buf s = buf(rows * keys), mx = buf(rows);
      numerics::device_attention_scores(q.data(), static_cast<int>(hd), k.data(), static_cast<int>(hd), static_cast<int>(rows),
                                        static_cast<int>(keys), static_cast<int>(hd), call.param, s.data(), mx.data());
      store_f32(scores, s.data(), s.size());
      store_f32(maxima, mx.data(), rows);
      return;
    }
    case KernelKind::attention_values: {
      const std::size_t rows = d[0], keys = d[1], hd = d[2], blocks = d[3];
      // V's rows padded to whole 64 B lines (head dim 72 = 4.5 lines): the P.V product's row
      // loads then never split a cache line (5% of the kernel).
      const std::size_t ldv = (hd + 15) / 16 * 16;
      const Buf p = buf(rows * keys), maxima = buf(blocks * rows), v = buf(keys * ldv), row_max = buf(rows);
      std::fill(row_max.data(), row_max.data() + rows, -INFINITY);
      // The scores read straight from tile memory when they are aligned floats (1.8% per
      // layer faster than through a copy), else from a copy.
      const std::uint8_t* in = operand(0, p.size() * 4);
      const float* s = reinterpret_cast<const float*>(in);
      if (!aligned_floats(in)) load_f32(in, p.data(), p.size()), s = p.data();
      load_f32(operand(1, maxima.size() * 4), maxima.data(), maxima.size());
      const std::uint8_t* v_bytes = operand(2, keys * hd * 2);
      numerics::from_fp16_bits_rows(u16(v_bytes), hd, v.data(), ldv, keys, hd);
      for (std::size_t b = 0; b < blocks; ++b)
        for (std::size_t i = 0; i < rows; ++i) row_max[i] = std::max(row_max[i], maxima[b * rows + i]);
      const Buf part = buf(rows * (hd + 1));
      numerics::device_attention_values(s, p.data(), row_max.data(), static_cast<int>(rows), static_cast<int>(keys), v.data(),
                                        static_cast<int>(ldv), static_cast<int>(hd), part.data());
      store_f32(operand(3, part.size() * 4), part.data(), part.size());
      return;
    }
    case KernelKind::attention_combine: {
      const std::size_t rows = d[0], hd = d[1], blocks = d[2];
      const Buf parts = buf(blocks * rows * (hd + 1)), out = buf(rows * hd);
      load_f32(operand(0, parts.size() * 4), parts.data(), parts.size());
      numerics::device_attention_combine(parts.data(), static_cast<int>(blocks), static_cast<int>(rows), static_cast<int>(hd),
                                         out.data(), static_cast<int>(hd));
      store_f16(operand(1, out.size() * 2), out.data(), out.size());
      return;
    }
  }
  throw Error(describe(ctx) + ": unknown kernel", kExitInternal);
}

}  // namespace tilevit::device

// One kernel call on one tile: operands read from the tile's SRAM, the arithmetic of
// numerics/device_kernels, the result written back. Operand order: program.hpp.
#include "device/kernels.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/device_kernels.hpp"

namespace tilevit::device {

using compiler::KernelKind;

namespace {

// Per-thread scratch, reused across calls: the full model makes ~1.4 M kernel calls per
// inference, and fresh buffers each time cost more in page faults than the arithmetic.
struct Scratch {
  std::vector<float> buffers[6];
  float* get(int i, std::size_t n) {
    if (buffers[i].size() < n) buffers[i].resize(n);
    return buffers[i].data();
  }
};
thread_local Scratch scratch;

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
      const Buf a = buf(rows * inner), b = buf(inner * cols), c = buf(rows * cols);
      if (fp8) {
        load_f8(operand(0, a.size()), a.data(), a.size(), call.scale);
        load_f8(operand(1, b.size()), b.data(), b.size(), call.scale);
      } else {
        load_f16(operand(0, a.size() * es), a.data(), a.size());
        load_f16(operand(1, b.size() * es), b.data(), b.size());
      }
      numerics::device_gemm(numerics::DeviceGemm{static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(inner),
                                                 a.data(), static_cast<int>(inner), b.data(), static_cast<int>(cols),
                                                 c.data(), static_cast<int>(cols), fp8 ? 32 : 0, true});
      store_f16(operand(2, c.size() * 2), c.data(), c.size());
      return;
    }
    case KernelKind::reduce_add: {
      const std::size_t n = d[0], parts = d[1];
      const Buf in = buf(n * parts), out = buf(n);
      load_f16(operand(0, in.size() * 2), in.data(), in.size());
      numerics::device_reduce_add(in.data(), static_cast<int>(parts), n, out.data());
      store_f16(operand(1, n * 2), out.data(), n);
      return;
    }
    case KernelKind::bias_add: {
      const std::size_t rows = d[0], cols = d[1];
      const Buf x = buf(rows * cols), bias = buf(cols);
      load_f16(operand(0, x.size() * 2), x.data(), x.size());
      load_f16(operand(1, cols * 2), bias.data(), cols);
      for (std::size_t r = 0; r < rows; ++r) numerics::device_add(&x[r * cols], bias.data(), &x[r * cols], cols);
      store_f16(operand(2, x.size() * 2), x.data(), x.size());
      return;
    }
    case KernelKind::add: {
      const std::size_t n = d[0];
      const Buf a = buf(n), b = buf(n);
      load_f16(operand(0, n * 2), a.data(), n);
      load_f16(operand(1, n * 2), b.data(), n);
      numerics::device_add(a.data(), b.data(), a.data(), n);
      store_f16(operand(2, n * 2), a.data(), n);
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
      const std::size_t n = d[0];
      const Buf x = buf(n);
      load_f16(operand(0, n * 2), x.data(), n);
      numerics::fp8_encode(x.data(), operand(1, n), n, numerics::Fp8Format::F143, call.scale);
      return;
    }
    case KernelKind::attention_scores: {
      const std::size_t rows = d[0], keys = d[1], hd = d[2];
      const Buf q = buf(rows * hd), k = buf(keys * hd), s = buf(rows * keys), mx = buf(rows);
      load_f16(operand(0, q.size() * 2), q.data(), q.size());
      load_f16(operand(1, k.size() * 2), k.data(), k.size());
      numerics::device_attention_scores(q.data(), static_cast<int>(hd), k.data(), static_cast<int>(hd), static_cast<int>(rows),
                                        static_cast<int>(keys), static_cast<int>(hd), call.param, s.data(), mx.data());
      store_f32(operand(2, s.size() * 4), s.data(), s.size());
      store_f32(operand(3, rows * 4), mx.data(), rows);
      return;
    }
    case KernelKind::attention_values: {
      const std::size_t rows = d[0], keys = d[1], hd = d[2], blocks = d[3];
      const Buf s = buf(rows * keys), maxima = buf(blocks * rows), v = buf(keys * hd), part = buf(rows * (hd + 1)),
                row_max = buf(rows);
      std::fill(row_max.data(), row_max.data() + rows, -INFINITY);
      load_f32(operand(0, s.size() * 4), s.data(), s.size());
      load_f32(operand(1, maxima.size() * 4), maxima.data(), maxima.size());
      load_f16(operand(2, v.size() * 2), v.data(), v.size());
      for (std::size_t b = 0; b < blocks; ++b)
        for (std::size_t i = 0; i < rows; ++i) row_max[i] = std::max(row_max[i], maxima[b * rows + i]);
      numerics::device_attention_values(s.data(), row_max.data(), static_cast<int>(rows), static_cast<int>(keys), v.data(),
                                        static_cast<int>(hd), static_cast<int>(hd), part.data());
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

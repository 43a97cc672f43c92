#include "compiler/verify.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "compiler/program_walk.hpp"
#include "compiler/verify_schedule.hpp"
#include "numerics/fp8.hpp"
#include "support/utf8.hpp"

namespace tilevit::compiler {
namespace {

struct Checker {
  const target::MachineDescription& m;
  const CompiledProgram& p;
  VerifyReport report;
  std::size_t limit;

  void fail(const std::string& message) {
    if (report.violations.size() < limit) report.violations.push_back(message);
    ++report.violation_count;
  }
  // For violations that may come in the millions: the message is built only while the
  // report still keeps messages.
  template <typename Message>
  void fail_lazily(Message&& message) {
    if (report.violations.size() < limit) report.violations.push_back(message());
    ++report.violation_count;
  }
  std::string where(std::uint32_t tile, std::uint32_t step) {
    return "tile " + std::to_string(tile) + ", superstep " + std::to_string(step) + " (" +
           (step < p.steps.size() ? p.steps[step].label : std::string("?")) + ")";
  }
  std::uint32_t iterations(std::uint32_t step) const { return executions(p, step); }

  // A byte range [offset, offset + bytes) of `allocation`, advanced by `stride` per loop
  // iteration, used on `tile` in `phase` (of superstep step_of_phase(phase)). Returns
  // false (after reporting) if invalid.
  bool check_range(const std::string& what, std::uint32_t tile, std::uint32_t phase, std::uint32_t allocation,
                   std::uint64_t offset, std::uint64_t bytes, std::uint64_t stride) {
    const std::uint32_t step = step_of_phase(phase);
    if (allocation >= p.allocations.size()) {
      fail(where(tile, step) + ": " + what + " names allocation " + std::to_string(allocation) + " of " +
           std::to_string(p.allocations.size()));
      return false;
    }
    const Allocation& a = p.allocations[allocation];
    if (a.tile != tile) {
      fail(where(tile, step) + ": " + what + " uses \"" + a.request.label + "\" which lives on tile " + std::to_string(a.tile));
      return false;
    }
    const std::uint64_t end = offset + stride * (iterations(step) - 1) + bytes;
    if (end > a.request.bytes) {
      fail(where(tile, step) + ": " + what + " reaches byte " + std::to_string(end) + " of \"" + a.request.label + "\" (" +
           std::to_string(a.request.bytes) + " B)");
      return false;
    }
    const bool whole = a.request.kind == AllocationKind::parameter || a.request.kind == AllocationKind::support;
    if (!whole && (phase < a.request.first || phase > a.request.last))
      fail(where(tile, step) + ": " + what + " uses \"" + a.request.label + "\" in its " +
           (phase % 2 == 0 ? "compute" : "exchange") + " phase, outside its lifetime " +
           describe_phase(a.request.first) + " .. " + describe_phase(a.request.last));
    return true;
  }

  // Labels and names are printed and written into JSON viewers: printable UTF-8 only.
  // The message names the place, never the bytes.
  void check_label(const std::string& text, const std::string& what) {
    std::size_t bad_at = 0;
    if (!printable_utf8(text, &bad_at))
      fail(what + " is not printable UTF-8 (byte " + std::to_string(bad_at) + " of " + std::to_string(text.size()) + ")");
  }
  void check_labels(const std::vector<Tensor>& tensors) {
    for (std::uint32_t i = 0; i < p.allocations.size(); ++i)
      check_label(p.allocations[i].request.label,
                  "tile " + std::to_string(p.allocations[i].tile) + ": the label of allocation " + std::to_string(i));
    for (std::uint32_t i = 0; i < p.steps.size(); ++i) check_label(p.steps[i].label, "the label of superstep " + std::to_string(i));
    for (std::uint32_t i = 0; i < p.op_names.size(); ++i) check_label(p.op_names[i], "op name " + std::to_string(i));
    for (std::uint32_t i = 0; i < tensors.size(); ++i) check_label(tensors[i].name, "the name of tensor " + std::to_string(i));
  }

  void check_allocations(bool profiling) {
    std::vector<std::vector<std::uint32_t>> by_tile(m.tiles);
    for (std::uint32_t i = 0; i < p.allocations.size(); ++i) {
      const Allocation& a = p.allocations[i];
      const AllocationRequest& r = a.request;
      const std::string name = "tile " + std::to_string(a.tile) + ": \"" + r.label + "\"";
      if (a.tile >= m.tiles) {
        fail(name + " is on a tile the machine does not have");
        continue;
      }
      by_tile[a.tile].push_back(i);
      const std::uint64_t begin = a.address, end = std::uint64_t(a.address) + r.bytes;
      if (r.alignment == 0 || (r.alignment & (r.alignment - 1)) || a.address % r.alignment)
        fail(name + " at 0x" + hex(a.address) + " is not aligned to " + std::to_string(r.alignment));
      const target::MemoryRegion* region = m.region_at(a.address);
      if (!region || end > region->end) fail(name + " [0x" + hex(begin) + ", 0x" + hex(end) + ") is not inside one memory region");
      else if (!region_satisfies(*region, r.region))
        fail(name + " needs a " + std::string(to_string(r.region)) + " region but sits in " + region->name);
      for (const auto& reserved : m.reserved) {
        if (reserved.when == target::ReservedWhen::profiling && !profiling) continue;
        if (begin < reserved.end() && reserved.start < end) fail(name + " overlaps reserved range " + reserved.name);
      }
    }
    check_address_overlaps(by_tile);
  }

  // Live allocations never share bytes: sweep each tile by address. The pairs that share
  // addresses can be quadratic in number, so the sweep stops after kMaxOverlapPairs.
  void check_address_overlaps(std::vector<std::vector<std::uint32_t>>& by_tile) {
    constexpr std::uint64_t kMaxOverlapPairs = 1u << 20;
    std::uint64_t pairs = 0;
    for (auto& list : by_tile) {
      std::sort(list.begin(), list.end(), [&](auto x, auto y) { return p.allocations[x].address < p.allocations[y].address; });
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Allocation& a = p.allocations[list[i]];
        const std::uint64_t a_end = std::uint64_t(a.address) + a.request.bytes;
        for (std::size_t j = i + 1; j < list.size() && p.allocations[list[j]].address < a_end; ++j) {
          if (++pairs > kMaxOverlapPairs) {  // kept past the limit: the count is incomplete from here
            report.violations.push_back("more than " + std::to_string(kMaxOverlapPairs) +
                                        " pairs of allocations share addresses; stopped checking them");
            ++report.violation_count;
            return;
          }
          const Allocation& b = p.allocations[list[j]];
          if (lifetimes_overlap(a.request, b.request))
            fail_lazily([&] {
              return "tile " + std::to_string(a.tile) + ": \"" + a.request.label + "\" and \"" + b.request.label +
                     "\" overlap in address while both live";
            });
        }
      }
    }
  }

  bool lifetimes_overlap(const AllocationRequest& a, const AllocationRequest& b) const {
    auto whole = [](const AllocationRequest& r) {
      return r.kind == AllocationKind::parameter || r.kind == AllocationKind::support;
    };
    if (whole(a) || whole(b)) return true;
    return a.first <= b.last && b.first <= a.last;
  }

  static std::string hex(std::uint64_t v) {
    std::ostringstream s;
    s << std::hex << v;
    return s.str();
  }

  void check_calls() {
    for (std::uint32_t step = 0; step < p.steps.size(); ++step) {
      for (const KernelCall& c : p.steps[step].compute) {
        ++report.kernel_calls;
        if (c.tile >= m.tiles) {
          fail("superstep " + std::to_string(step) + ": kernel on tile " + std::to_string(c.tile));
          continue;
        }
        if (!check_signature(c, step)) continue;
        const KernelKindInfo& info = kernel_info(c.kind);
        for (std::size_t i = 0; i < c.operands.size(); ++i) {
          const Operand& o = c.operands[i];
          if (check_range(operand_name(info, i), c.tile, compute_phase(step), o.allocation, o.offset, o.bytes,
                          o.layer_stride))
            check_operand_use(c, step, i);
        }
        if (c.kind == KernelKind::gemm_fp8 || c.kind == KernelKind::gemm_fp16) check_elements(c, step);
      }
    }
  }

  static std::string operand_name(const KernelKindInfo& info, std::size_t i) {
    return std::string(info.name) + " operand " + std::to_string(i) + " (" + info.operands()[i].name + ")";
  }

  // The call against its kind's signature: a kind that exists, dims in range, the operand
  // count, and every operand's bytes as the signature computes them from the dims.
  bool check_signature(const KernelCall& c, std::uint32_t step) {
    if (static_cast<std::size_t>(c.kind) >= kKernelKinds) {
      fail(where(c.tile, step) + ": kernel kind " + std::to_string(int(c.kind)) + " is not a kernel kind");
      return false;
    }
    const KernelKindInfo& info = kernel_info(c.kind);
    for (std::size_t i = 0; i < info.dims().size(); ++i)
      if (c.dims[i] == 0 || c.dims[i] > m.sram_size) {  // each dim scales some operand held on the tile
        fail(where(c.tile, step) + ": " + info.name + " dim " + std::string(to_string(info.dims()[i])) + " = " +
             std::to_string(c.dims[i]) + " is outside 1.." + std::to_string(m.sram_size));
        return false;
      }
    if (c.scale < numerics::kMinFp8Scale || c.scale > numerics::kMaxFp8Scale) {  // 0 for kinds without one
      fail(where(c.tile, step) + ": " + info.name + " FP8 scale " + std::to_string(c.scale) + " is outside [" +
           std::to_string(numerics::kMinFp8Scale) + ", " + std::to_string(numerics::kMaxFp8Scale) + "]");
      return false;
    }
    if (c.operands.size() != info.operands().size()) {
      std::string names;
      for (const OperandSpec& o : info.operands()) names += (names.empty() ? "" : ", ") + std::string(o.name);
      fail(where(c.tile, step) + ": " + info.name + " has " + std::to_string(c.operands.size()) +
           " operands, its signature has " + std::to_string(info.operands().size()) + " (" + names + ")");
      return false;
    }
    bool ok = true;
    const KernelShape shape = c.shape();
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
      const std::uint64_t need = info.operand_bytes(i, shape);
      if (c.operands[i].bytes != need) {
        fail(where(c.tile, step) + ": " + operand_name(info, i) + " holds " + std::to_string(c.operands[i].bytes) +
             " B, its signature needs " + std::to_string(need) + " B for " + dims_text(c.kind, c.dims) + " " +
             dtype_name(info.operands()[i].dtype));
        ok = false;
      }
    }
    return ok;
  }

  // An operand in range: in a region the kernel can read it from, and no output written
  // into a resident weight.
  void check_operand_use(const KernelCall& c, std::uint32_t step, std::size_t i) {
    const OperandSpec& spec = kernel_info(c.kind).operands()[i];
    const Allocation& a = p.allocations[c.operands[i].allocation];
    const target::MemoryRegion* region = m.region_at(a.address);
    if (region && !region_satisfies(*region, spec.region))
      fail(where(c.tile, step) + ": " + operand_name(kernel_info(c.kind), i) + " needs a " +
           std::string(to_string(spec.region)) + " region but \"" + a.request.label + "\" sits in " + region->name);
    if (spec.role == OperandRole::output && a.request.kind == AllocationKind::parameter)
      fail(where(c.tile, step) + ": " + operand_name(kernel_info(c.kind), i) + " writes the resident weight \"" +
           a.request.label + "\"");
  }

  // The GEMM's streamed left operand and its output must not share an SRAM element.
  void check_elements(const KernelCall& c, std::uint32_t step) {
    auto units = [&](const Operand& o, std::uint64_t& first, std::uint64_t& last) {
      if (o.allocation >= p.allocations.size()) return false;
      const std::uint64_t begin = p.allocations[o.allocation].address + o.offset;
      const target::MemoryRegion* r = m.region_at(static_cast<std::uint32_t>(begin));
      if (!r) return false;
      first = (begin - r->start) / r->unit_bytes() + (std::uint64_t(r->start) << 20);
      last = (begin + o.bytes - 1 - r->start) / r->unit_bytes() + (std::uint64_t(r->start) << 20);
      return true;
    };
    std::uint64_t a0, a1, c0, c1;
    if (units(c.operands[0], a0, a1) && units(c.operands[2], c0, c1) && a0 <= c1 && c0 <= a1)
      fail(where(c.tile, step) + ": GEMM output and streamed operand share an SRAM element");
  }

  void check_transfers() {
    for (std::uint32_t step = 0; step < p.steps.size(); ++step) {
      // Per tile: byte ranges written and read in this exchange phase.
      std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> writes, reads;
      // Waves: in order, and no tile sends or receives more than W words in one.
      const std::uint64_t wave_bytes = std::uint64_t(p.exchange_stream_words) * 4;
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> wave_sent, wave_received;
      std::uint32_t last_wave = 0;
      for (const Transfer& t : p.steps[step].exchange) {
        ++report.transfers;
        if (t.wave < last_wave || t.wave >= std::max(1u, p.steps[step].waves))
          fail("superstep " + std::to_string(step) + ": transfer in wave " + std::to_string(t.wave) + " out of order");
        last_wave = t.wave;
        if ((wave_sent[{t.wave, t.source.tile}] += t.bytes) > wave_bytes)
          fail(where(t.source.tile, step) + ": sends more than " + std::to_string(p.exchange_stream_words) +
               " words in wave " + std::to_string(t.wave));
        for (const Endpoint& d : t.destinations)
          if ((wave_received[{t.wave, d.tile}] += t.bytes) > wave_bytes)
            fail(where(d.tile, step) + ": receives more than " + std::to_string(p.exchange_stream_words) +
                 " words in wave " + std::to_string(t.wave));
        if (t.bytes == 0 || t.bytes % 4 || t.source.offset % 4)
          fail(where(t.source.tile, step) + ": transfer of " + std::to_string(t.bytes) + " B at offset " +
               std::to_string(t.source.offset) + " is not whole 32-bit words");
        if (t.source.tile >= m.tiles || t.destinations.empty()) {
          fail("superstep " + std::to_string(step) + ": transfer with an invalid source tile or no destination");
          continue;
        }
        if (check_range("transfer source", t.source.tile, exchange_phase(step), t.source.allocation, t.source.offset, t.bytes,
                        t.source_layer_stride)) {
          const std::uint64_t a = p.allocations[t.source.allocation].address + std::uint64_t(t.source.offset);
          reads[t.source.tile].push_back({a, a + t.bytes + std::uint64_t(t.source_layer_stride) * (iterations(step) - 1)});
        }
        for (const Endpoint& d : t.destinations) {
          if (d.tile >= m.tiles) {
            fail("superstep " + std::to_string(step) + ": transfer to tile " + std::to_string(d.tile));
            continue;
          }
          if (d.tile == t.source.tile)
            fail(where(d.tile, step) + ": a transfer loops back to its sender (data a tile holds is copied locally)");
          if (d.offset % 4) fail(where(d.tile, step) + ": transfer destination offset is not word aligned");
          const std::string pointer = "transfer destination (pointer at cycle " + std::to_string(t.land_cycle) + ")";
          if (check_range(pointer, d.tile, exchange_phase(step), d.allocation, d.offset, t.bytes, 0)) {
            const std::uint64_t a = p.allocations[d.allocation].address + std::uint64_t(d.offset);
            writes[d.tile].push_back({a, a + t.bytes});
          }
        }
      }
      check_local_copies(step, reads, writes);
      check_exchange_schedule(m, p, step, [this](const std::string& message) { fail(message); });
      for (auto& [tile, ranges] : writes) {
        std::sort(ranges.begin(), ranges.end());
        for (std::size_t i = 1; i < ranges.size(); ++i)
          if (ranges[i].first < ranges[i - 1].second) {
            fail(where(tile, step) + ": two transfers write the same bytes");
            break;
          }
        auto& rd = reads[tile];
        std::sort(rd.begin(), rd.end());
        for (const auto& w : ranges) {
          auto it = std::lower_bound(rd.begin(), rd.end(), std::make_pair(w.second, std::uint64_t(0)));
          if (it != rd.begin() && std::prev(it)->second > w.first) {
            fail(where(tile, step) + ": a transfer writes bytes another transfer of the same phase reads");
            break;
          }
        }
      }
    }
  }

  // Local copies: both ends on the copying tile, in range and live (they run after the
  // compute phase's kernels: the source live then, the destination from the exchange
  // phase on); their bytes join the phase's reads and writes (no other transfer of the
  // phase may touch them).
  void check_local_copies(std::uint32_t step, std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>>& reads,
                          std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>>& writes) {
    for (const LocalCopy& c : p.steps[step].local_copies) {
      if (c.tile >= m.tiles || c.source.tile != c.tile || c.destination.tile != c.tile) {
        fail("superstep " + std::to_string(step) + ": local copy on tile " + std::to_string(c.tile) + " names tiles " +
             std::to_string(c.source.tile) + " and " + std::to_string(c.destination.tile));
        continue;
      }
      if (c.bytes == 0 || c.bytes % 4 || c.source.offset % 4 || c.destination.offset % 4)
        fail(where(c.tile, step) + ": local copy of " + std::to_string(c.bytes) + " B is not whole aligned 32-bit words");
      if (check_range("local copy source", c.tile, compute_phase(step), c.source.allocation, c.source.offset, c.bytes, c.source_layer_stride)) {
        const std::uint64_t a = p.allocations[c.source.allocation].address + std::uint64_t(c.source.offset);
        reads[c.tile].push_back({a, a + c.bytes + std::uint64_t(c.source_layer_stride) * (iterations(step) - 1)});
      }
      if (check_range("local copy destination", c.tile, exchange_phase(step), c.destination.allocation, c.destination.offset, c.bytes, 0)) {
        const std::uint64_t a = p.allocations[c.destination.allocation].address + std::uint64_t(c.destination.offset);
        writes[c.tile].push_back({a, a + c.bytes});
      }
    }
  }

  void check_bindings(const std::vector<HostBinding>& bindings, const std::vector<Tensor>& tensors) {
    for (const HostBinding& b : bindings) {
      ++report.bindings;
      if (b.tensor >= tensors.size()) {
        fail("binding names tensor " + std::to_string(b.tensor));
        continue;
      }
      const Tensor& t = tensors[b.tensor];
      if (b.row0 + b.rows > t.rows || b.col0 + b.cols > t.cols || b.layers == 0) {
        fail("binding of " + t.name + " is outside the tensor");
        continue;
      }
      const std::uint64_t bytes = std::uint64_t(b.rows) * b.cols * dtype_bytes(t.dtype);
      if (b.allocation >= p.allocations.size() || p.allocations[b.allocation].tile != b.tile ||
          b.offset + std::uint64_t(b.layer_stride) * (b.layers - 1) + bytes > p.allocations[b.allocation].request.bytes)
        fail("binding of " + t.name + " on tile " + std::to_string(b.tile) + " does not fit its allocation");
      else if (b.direction != HostBinding::Direction::parameter &&
               !is_whole_program(p.allocations[b.allocation].request.kind))
        check_binding_lifetime(b, t, p.allocations[b.allocation].request);
    }
  }

  // The host writes an input before the first step and reads an output after the last:
  // no other allocation may hold those bytes in between.
  void check_binding_lifetime(const HostBinding& b, const Tensor& t, const AllocationRequest& r) {
    const bool input = b.direction == HostBinding::Direction::input;
    const std::uint32_t end = p.steps.empty() ? 0 : exchange_phase(static_cast<std::uint32_t>(p.steps.size() - 1));
    if (input ? r.first != 0 : r.last < end)
      fail("binding of " + t.name + " on tile " + std::to_string(b.tile) + ": its allocation lives " +
           describe_phase(r.first) + " .. " + describe_phase(r.last) + ", the host " +
           (input ? "writes it before step 0" : "reads it after the last step"));
  }

  // A profiling build gives each tile one sample buffer that holds every record it makes.
  void check_profile_buffers() {
    const auto records = profile_records_per_tile(p, m.tiles, p.profiling);
    std::vector<std::uint64_t> reserved(m.tiles, 0);
    for (const Allocation& a : p.allocations)
      if (a.request.purpose == AllocationPurpose::profile_samples && a.tile < m.tiles) reserved[a.tile] += a.request.bytes;
    for (std::uint32_t t = 0; t < m.tiles; ++t)
      if (reserved[t] != records[t] * kProfileRecordBytes)
        fail("tile " + std::to_string(t) + ": profiling buffer holds " + std::to_string(reserved[t]) + " B, its " +
             std::to_string(records[t]) + " records need " + std::to_string(records[t] * kProfileRecordBytes) + " B");
  }
};

}  // namespace

VerifyReport verify_program(const target::MachineDescription& machine, const CompiledProgram& program,
                            const std::vector<HostBinding>& bindings, const std::vector<Tensor>& tensors, bool profiling,
                            std::size_t limit) {
  Checker c{machine, program, {}, limit};
  c.report.allocations = program.allocations.size();
  if (program.loop_begin > program.loop_end || program.loop_end > program.steps.size() || program.loop_count == 0)
    c.fail("loop bounds " + std::to_string(program.loop_begin) + ".." + std::to_string(program.loop_end) +
           " do not fit the program's " + std::to_string(program.steps.size()) + " supersteps");
  c.check_labels(tensors);
  c.check_allocations(profiling || program.profiling.enabled);
  c.check_calls();
  c.check_transfers();
  c.check_profile_buffers();
  c.check_bindings(bindings, tensors);
  return c.report;
}

}  // namespace tilevit::compiler

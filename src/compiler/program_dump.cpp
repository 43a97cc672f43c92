#include "compiler/program_dump.hpp"

#include <sstream>

namespace tilevit::compiler {
namespace {

// "a12+64" and, with a per-layer stride, "a12+64/+4096".
std::string place_text(std::uint32_t allocation, std::uint32_t offset, std::uint32_t stride) {
  return "a" + std::to_string(allocation) + "+" + std::to_string(offset) +
         (stride ? "/+" + std::to_string(stride) : "");
}
std::string endpoint_text(const Endpoint& e, std::uint32_t stride = 0) {
  return "t" + std::to_string(e.tile) + ":" + place_text(e.allocation, e.offset, stride);
}

void dump_step(std::ostringstream& out, const CompiledProgram& p, std::size_t index) {
  const Superstep& s = p.steps[index];
  out << "step " << index << " \"" << s.label << "\"";
  if (index >= p.loop_begin && index < p.loop_end) out << " (loop)";
  out << "\n";
  for (const KernelCall& c : s.compute) {
    out << "  call t" << c.tile << " " << kernel_name(c.kind) << " " << dims_text(c.kind, c.dims) << " op "
        << (c.op < p.op_names.size() ? p.op_names[c.op] : "?");
    if (c.scale != 0) out << " scale " << c.scale;
    out << " (";
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
      const Operand& o = c.operands[i];
      out << (i ? ", " : "") << place_text(o.allocation, o.offset, o.layer_stride) << " " << o.bytes << " B";
    }
    out << ")\n";
  }
  for (const LocalCopy& c : s.local_copies)
    out << "  copy t" << c.tile << " " << endpoint_text(c.source, c.source_layer_stride) << " -> "
        << endpoint_text(c.destination) << " " << c.bytes << " B\n";
  if (s.exchange.empty()) return;
  out << "  exchange " << s.exchange.size() << " transfers, " << s.waves << " waves, " << s.exchange_cycles
      << " cycles\n";
  for (const Transfer& x : s.exchange) {
    out << "    wave " << x.wave << " " << endpoint_text(x.source, x.source_layer_stride) << " ->";
    for (const Endpoint& d : x.destinations) out << " " << endpoint_text(d);
    out << " " << x.bytes << " B send " << x.send_cycle << " land " << x.land_cycle << "\n";
  }
}

}  // namespace

std::string dump_program(const CompiledProgram& p) {
  std::ostringstream out;
  out << "program: " << p.steps.size() << " steps, loop " << p.loop_begin << ".." << p.loop_end << " x "
      << p.loop_count << ", W " << p.exchange_stream_words << ", " << p.op_names.size() << " ops, "
      << p.allocations.size() << " allocations\n";
  for (std::size_t i = 0; i < p.steps.size(); ++i) dump_step(out, p, i);
  out << "allocations\n";
  for (std::size_t i = 0; i < p.allocations.size(); ++i) {
    const Allocation& a = p.allocations[i];
    const AllocationRequest& r = a.request;
    out << "  a" << i << " t" << a.tile << " " << to_string(r.kind) << " " << r.bytes << " B align " << r.alignment
        << " " << to_string(r.region) << " phases " << r.first << ".." << r.last << " @ " << a.address << " \""
        << r.label << "\"\n";
  }
  return out.str();
}

}  // namespace tilevit::compiler

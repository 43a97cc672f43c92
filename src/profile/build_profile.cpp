// The modelled profile of one call: the same per-tile cost model as the compiler's
// estimate and the device timeline (compiler/compile.hpp), recorded at the granularity a
// profiling build asks for.
#include <algorithm>
#include <map>
#include <set>

#include "compiler/exchange_schedule.hpp"
#include "compiler/program_walk.hpp"
#include "compiler/step_costs.hpp"
#include "profile/profile.hpp"
#include "support/error.hpp"

namespace tilevit::profile {

std::string_view to_string(SampleKind kind) {
  switch (kind) {
    case SampleKind::compute: return "compute";
    case SampleKind::idle: return "idle";
    case SampleKind::sync: return "sync";
    case SampleKind::exchange: return "exchange";
    case SampleKind::repeat: return "repeat";
    case SampleKind::graph: return "graph";
  }
  return "?";
}

SampleKind sample_kind_from_string(std::string_view name) {
  for (std::size_t k = 0; k < kSampleKinds; ++k)
    if (to_string(static_cast<SampleKind>(k)) == name) return static_cast<SampleKind>(k);
  throw Error("unknown sample kind \"" + std::string(name) + "\"", kExitBadInput);
}

namespace {

using compiler::KernelCall;
using compiler::Superstep;

std::uint64_t call_flops(const KernelCall& c) { return compiler::kernel_info(c.kind).flops(c.shape()); }
std::string dims_text(const KernelCall& c) { return compiler::dims_text(c.kind, c.dims); }

std::uint32_t saturate(std::uint64_t v) { return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, UINT32_MAX)); }

class Recorder {
 public:
  Recorder(const target::MachineDescription& m, const compiler::CompiledProgram& p, const compiler::ProfileDetail& o,
           Profile& out)
      : m_(m), p_(p), o_(o), out_(out), cache_(p.steps.size()), costs_(compiler::step_costs(m, p)) {}

  std::uint64_t step(std::uint32_t index, std::uint32_t iteration, std::uint64_t at, bool detail) {
    const Superstep& s = p_.steps[index];
    StepData& d = data(index);
    const compiler::StepCost& cost = costs_[index];
    const std::int32_t layer = compiler::layer_of(p_, index, iteration);
    const bool samples = detail && o_.granularity != Granularity::graph;
    const bool kernel = o_.granularity == Granularity::kernel;
    // The tiles leave the previous sync at different times: the step's entry skew, charged
    // as synchronisation before its compute (compiler/step_costs.hpp).
    if (cost.entry_skew > 0) {
      for (std::uint32_t t = 0; t < m_.tiles; ++t) {
        total(SampleKind::sync, cost.entry_skew);
        if (samples) add(t, at, at + cost.entry_skew, StepMeta{SampleKind::sync, index, layer, s.label, "", "", ""}, 0, 0, 0);
      }
      at += cost.entry_skew;
    }
    for (std::uint32_t t = 0; t < m_.tiles; ++t) {
      total(SampleKind::compute, d.busy[t]);
      out_.uncalibrated_compute_cycles += d.uncalibrated[t];
      uncalibrated_[t] += d.uncalibrated[t];
      total(SampleKind::idle, cost.compute - d.busy[t]);
      flops_[t] += d.flops[t];
      if (!samples) continue;
      if (kernel) {
        std::uint64_t c = at;
        for (std::uint32_t i : d.calls[t]) {
          const KernelCall& call = s.compute[i];
          const std::uint64_t cycles = compiler::estimate_call_cycles(m_, call);
          const StepMeta meta{SampleKind::compute, index, layer, s.label, compiler::kernel_name(call.kind),
                              p_.op_names.at(call.op), dims_text(call)};
          add(t, c, c + cycles, meta, 0, 0, call_flops(call), compiler::estimate_call_uncalibrated_cycles(m_, call));
          c += cycles;
        }
        // The tile's local copy call, after its kernels: a quoted rule, uncalibrated.
        const StepMeta copy{SampleKind::compute, index, layer, s.label, "local copy", "", ""};
        add(t, c, at + d.busy[t], copy, 0, 0, 0, at + d.busy[t] - c);
      } else if (d.busy[t] > 0) {
        add(t, at, at + d.busy[t], compute_meta(d, s, t, index, layer), 0, 0, d.flops[t], d.uncalibrated[t]);
      }
      add(t, at + d.busy[t], at + cost.compute, StepMeta{SampleKind::idle, index, layer, s.label, "", "", ""}, 0, 0, 0);
    }
    at += cost.compute;
    if (s.exchange.empty()) return at;
    // The phase overhead, then the stored schedule: per tile and wave the span from its
    // first send or landing to its last word's.
    const std::uint64_t exchange_start = at + cost.sync;
    const std::uint64_t phase_end = exchange_start + cost.exchange;
    const StepMeta idle{SampleKind::idle, index, layer, s.label, "", "", ""};
    for (std::uint32_t t = 0; t < m_.tiles; ++t) {
      total(SampleKind::sync, cost.sync);
      std::uint64_t busy = 0, sent = 0, received = 0, first = UINT64_MAX, last = 0;
      for (const WaveSpan& w : d.spans[t]) {
        busy += w.end - w.start, sent += w.sent, received += w.received;
        first = std::min<std::uint64_t>(first, w.start), last = std::max<std::uint64_t>(last, w.end);
      }
      busy = std::min<std::uint64_t>(busy, cost.exchange);
      total(SampleKind::exchange, busy);
      total(SampleKind::idle, cost.exchange - busy);
      sent_[t] += sent;
      received_[t] += received;
      if (!samples) continue;
      add(t, at, exchange_start, StepMeta{SampleKind::sync, index, layer, s.label, "", "", ""}, 0, 0, 0);
      if (d.spans[t].empty()) {
        add(t, exchange_start, phase_end, idle, 0, 0, 0);
        continue;
      }
      std::uint64_t c = exchange_start;
      auto span = [&](std::uint64_t start, std::uint64_t end, const std::string& shape, std::uint64_t out, std::uint64_t in) {
        add(t, c, exchange_start + start, idle, 0, 0, 0);
        add(t, exchange_start + start, exchange_start + end, StepMeta{SampleKind::exchange, index, layer, s.label, "", "", shape},
            saturate(out), saturate(in), 0);
        c = exchange_start + end;
      };
      if (kernel)  // one sample per wave the tile takes part in
        for (const WaveSpan& w : d.spans[t])
          span(w.start, w.end, "wave " + std::to_string(w.wave + 1) + " of " + std::to_string(s.waves), w.sent, w.received);
      else
        span(first, last, "", sent, received);
      add(t, c, phase_end, idle, 0, 0, 0);
    }
    return phase_end;
  }

  void add(std::uint32_t tile, std::uint64_t start, std::uint64_t end, const StepMeta& meta, std::uint32_t sent,
           std::uint32_t received, std::uint64_t flops, std::uint64_t uncalibrated = 0) {
    if (end <= start) return;
    out_.samples[tile].push_back(Sample{start, end, intern(meta), sent, received, flops, uncalibrated});
  }

  std::uint32_t intern(const StepMeta& meta) {
    const std::string key = std::to_string(int(meta.kind)) + '\x1f' + std::to_string(meta.step) + '\x1f' +
                            std::to_string(meta.layer) + '\x1f' + meta.kernel + '\x1f' + meta.operation + '\x1f' +
                            meta.shape;
    const auto [it, inserted] = index_.try_emplace(key, std::uint32_t(out_.meta.size()));
    if (inserted) out_.meta.push_back(meta);
    return it->second;
  }

  std::vector<std::uint64_t> flops_, sent_, received_, uncalibrated_;  // per tile, whole call

 private:
  // A tile's exchange in one wave, in cycles of the phase's schedule; words sent
  // (multicast once) and received.
  struct WaveSpan {
    std::uint32_t wave = 0, start = UINT32_MAX, end = 0;
    std::uint64_t sent = 0, received = 0;
  };
  struct StepData {
    bool ready = false;
    std::vector<std::uint64_t> busy, flops, uncalibrated;
    std::vector<bool> copying;  // the tile makes a local copy after its kernels
    std::vector<std::vector<std::uint32_t>> calls;  // per tile, indices into compute
    std::vector<std::vector<WaveSpan>> spans;  // per tile, by wave
  };

  StepData& data(std::uint32_t index) {
    StepData& d = cache_[index];
    if (d.ready) return d;
    const Superstep& s = p_.steps[index];
    d.busy = compiler::tile_compute_cycles(m_, s);
    d.flops.assign(m_.tiles, 0);
    d.uncalibrated.assign(m_.tiles, 0);
    d.copying.assign(m_.tiles, false);
    d.calls.resize(m_.tiles);
    for (std::uint32_t i = 0; i < s.compute.size(); ++i) {
      d.calls.at(s.compute[i].tile).push_back(i);
      d.flops[s.compute[i].tile] += call_flops(s.compute[i]);
      d.uncalibrated[s.compute[i].tile] += compiler::estimate_call_uncalibrated_cycles(m_, s.compute[i]);
    }
    if (!s.local_copies.empty()) {
      const auto copied = compiler::tile_local_copy_bytes(m_, s);
      for (std::uint32_t t = 0; t < m_.tiles; ++t) {
        d.copying[t] = copied[t] > 0;
        d.uncalibrated[t] += compiler::local_copy_cycles(m_, copied[t]);
      }
    }
    d.spans.resize(m_.tiles);
    auto span = [&](std::uint32_t tile, std::uint32_t wave) -> WaveSpan& {
      auto& list = d.spans.at(tile);
      if (list.empty() || list.back().wave != wave) list.push_back(WaveSpan{wave});  // transfers are in wave order
      return list.back();
    };
    for (const compiler::Transfer& x : s.exchange) {
      WaveSpan& out = span(x.source.tile, x.wave);
      out.start = std::min(out.start, x.send_cycle);
      out.end = std::max(out.end, static_cast<std::uint32_t>(compiler::send_end(m_, x)));
      out.sent += x.words();
      for (const compiler::Endpoint& e : x.destinations) {
        WaveSpan& in = span(e.tile, x.wave);
        in.start = std::min(in.start, x.land_cycle);
        in.end = std::max(in.end, static_cast<std::uint32_t>(compiler::land_end(m_, x)));
        in.received += x.words();
      }
    }
    d.ready = true;
    return d;
  }

  // A tile's compute phase as one sample: its kernels and operations in call order.
  StepMeta compute_meta(const StepData& d, const Superstep& s, std::uint32_t t, std::uint32_t index, std::int32_t layer) {
    std::vector<std::string> kernels, ops, shapes;
    auto note = [](std::vector<std::string>& list, const std::string& x) {
      if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
    };
    for (std::uint32_t i : d.calls[t]) {
      note(kernels, compiler::kernel_name(s.compute[i].kind));
      note(ops, p_.op_names.at(s.compute[i].op));
      note(shapes, dims_text(s.compute[i]));
    }
    if (d.copying[t]) note(kernels, "local copy");
    // A tile that only copies within its SRAM (no kernel call) belongs to no graph operation.
    if (d.copying[t] && ops.empty()) note(ops, kLocalCopyOperation);
    auto join = [](const std::vector<std::string>& list) {
      std::string out;
      for (const auto& x : list) out += (out.empty() ? "" : "+") + x;
      return out;
    };
    std::string shape = join(shapes);
    if (d.calls[t].size() > 1 && shapes.size() == 1) shape = std::to_string(d.calls[t].size()) + " x " + shape;
    return StepMeta{SampleKind::compute, index, layer, s.label, kernels.size() == 1 ? kernels[0] : "mixed", join(ops),
                    shape};
  }

  void total(SampleKind kind, std::uint64_t cycles) { out_.tile_cycles[std::size_t(kind)] += cycles; }

  const target::MachineDescription& m_;
  const compiler::CompiledProgram& p_;
  const compiler::ProfileDetail& o_;
  Profile& out_;
  std::vector<StepData> cache_;
  std::vector<compiler::StepCost> costs_;  // each step's cost, as the compiler and the device count it
  std::map<std::string, std::uint32_t> index_;
};

}  // namespace

Profile build_profile(const target::MachineDescription& m, const compiler::CompiledProgram& p,
                      const compiler::ProfileDetail& options) {
  Profile out;
  out.machine_name = m.name;
  out.tiles = m.tiles;
  out.clock_hz = m.clock_hz;
  out.flop_per_cycle_fp16 = m.flop_per_cycle_fp16;
  out.flop_per_cycle_fp8 = m.flop_per_cycle_fp8;
  out.options = options;
  out.loop_begin = p.loop_begin;
  out.loop_end = p.loop_end;
  out.loop_count = p.loop_count;
  out.steps = static_cast<std::uint32_t>(p.steps.size());
  out.samples.resize(m.tiles);
  Recorder r(m, p, options, out);
  r.flops_.assign(m.tiles, 0);
  r.sent_.assign(m.tiles, 0);
  r.received_.assign(m.tiles, 0);
  r.uncalibrated_.assign(m.tiles, 0);
  std::uint64_t at = 0, repeat_start = 0;
  const std::uint32_t detailed = options.iterations_in_detail;
  const auto step = [&](std::uint32_t s, std::uint32_t it) {
    const bool looped = compiler::in_loop(p, s);
    if (looped && s == p.loop_begin && it == detailed) repeat_start = at;
    at = r.step(s, it, at, !looped || it < detailed);
  };
  // Iterations past the detailed ones: one repeat sample per tile over their span.
  const auto loop_done = [&] {
    if (detailed >= p.loop_count || p.loop_end <= p.loop_begin || options.granularity == Granularity::graph) return;
    const std::string name =
        "layers " + std::to_string(detailed + 1) + "-" + std::to_string(p.loop_count) + " (repeat remainder)";
    const StepMeta meta{SampleKind::repeat, p.loop_begin, std::int32_t(detailed), name, "", "", ""};
    for (std::uint32_t t = 0; t < m.tiles; ++t) r.add(t, repeat_start, at, meta, 0, 0, 0);
  };
  compiler::walk_program(p, step, loop_done);
  out.span = at;
  if (options.granularity == Granularity::graph)
    for (std::uint32_t t = 0; t < m.tiles; ++t)
      r.add(t, 0, at, StepMeta{SampleKind::graph, kNoStep, -1, "call", "", "", ""},
            saturate(r.sent_[t]), saturate(r.received_[t]), r.flops_[t], r.uncalibrated_[t]);
  return out;
}

}  // namespace tilevit::profile

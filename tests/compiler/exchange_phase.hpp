#pragma once
// Hand-built exchange phases on the 16-tile test machine (4 rows of 4): a piece, one
// scheduled phase, and the verifier's findings on it. Shared by the schedule and packing tests.
#include <string>
#include <vector>

#include "compiler/exchange_schedule.hpp"
#include "compiler/verify_schedule.hpp"
#include "target/machine.hpp"

namespace tilevit::test_support {

inline const target::MachineDescription& m() { return target::test16(); }

// test16 with `bytes_per_cycle` each way on the exchange, checked as a machine file is.
inline target::MachineDescription test16_at(std::uint32_t bytes_per_cycle) {
  target::MachineDescription machine = target::test16();
  machine.exchange_send_bytes_per_cycle = machine.exchange_receive_bytes_per_cycle = bytes_per_cycle;
  return target::parse_machine(target::to_text(machine), "test16 at " + std::to_string(bytes_per_cycle) + " B/cycle");
}

// `words` from `from` to each of `to`, written at `offset` of the receiver's buffer 100 + tile.
inline compiler::Transfer piece(std::uint32_t from, std::uint32_t words, std::vector<std::uint32_t> to,
                                std::uint32_t offset = 0) {
  compiler::Transfer t;
  t.source = compiler::Endpoint{from, 0, 0};
  t.bytes = words * 4;
  for (std::uint32_t tile : to) t.destinations.push_back(compiler::Endpoint{tile, 100 + tile, offset});
  return t;
}

// One superstep holding `transfers` as a single wave, scheduled on `machine`.
inline compiler::CompiledProgram one_phase(std::vector<compiler::Transfer> transfers,
                                           const target::MachineDescription& machine = m()) {
  compiler::CompiledProgram p;
  p.steps.push_back(compiler::Superstep{.label = "x", .exchange = std::move(transfers), .waves = 1});
  compiler::schedule_exchange(p, machine);
  return p;
}

inline std::vector<std::string> schedule_violations(const compiler::CompiledProgram& p,
                                                    const target::MachineDescription& machine = m()) {
  std::vector<std::string> out;
  compiler::check_exchange_schedule(machine, p, 0, [&](const std::string& s) { out.push_back(s); });
  return out;
}

}  // namespace tilevit::test_support

#pragma once
// The machine figures a sweep may vary, in one table: each key names a field of the
// machine description (docs/MACHINE_FORMAT.md) and how a value is applied to a base
// description. A new sweepable figure (chips, link bandwidth) is one row here.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "target/machine.hpp"

namespace tilevit::sweep {

struct MachineKey {
  std::string_view name;      // the spec's axis name
  std::string_view meaning;   // one line for docs and errors
  std::uint64_t min = 0, max = 0;
  std::string_view excludes;  // another key that may not be swept together with this one ("" = none)
  // Applies `value` to `m`; throws Error naming the key when the base cannot take it.
  void (*apply)(target::MachineDescription& m, std::uint64_t value);
};

// In the order values are applied (rows and columns before tiles).
std::span<const MachineKey> machine_keys();
const MachineKey* find_machine_key(std::string_view name);

using MachineSetting = std::pair<const MachineKey*, std::uint64_t>;

// `base` with `settings` applied in table order, named "<base> key=value ...", and checked
// as a machine file is (parse_machine of its canonical text): Error(kExitBadInput) naming
// the field when the result is not a valid machine.
target::MachineDescription apply_machine_keys(const target::MachineDescription& base,
                                              const std::vector<MachineSetting>& settings);

}  // namespace tilevit::sweep

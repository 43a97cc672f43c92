#pragma once
// Allocation requests for the placement tests, and the one-line error a tile that cannot
// be placed gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "compiler/placement.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler::placement_test {

using target::MachineDescription;

inline AllocationRequest req(std::string label, AllocationKind kind, std::uint32_t bytes, std::uint32_t alignment,
                      RegionNeed region, std::uint32_t first = 0, std::uint32_t last = 0) {
  return {std::move(label), kind, bytes, alignment, region, first, last};
}
inline AllocationRequest act(std::string label, std::uint32_t bytes, std::uint32_t first, std::uint32_t last,
                      RegionNeed region = RegionNeed::interleaved, std::uint32_t alignment = 32) {
  return req(std::move(label), AllocationKind::activation, bytes, alignment, region, first, last);
}
inline AllocationRequest param(std::string label, std::uint32_t bytes, RegionNeed region = RegionNeed::interleaved,
                        std::uint32_t alignment = 32) {
  return req(std::move(label), AllocationKind::parameter, bytes, alignment, region);
}

// place_tile's error message (one line, with the expected exit code), "" when it placed.
inline std::string error_of(const MachineDescription& m, const TilePlacementInput& in, bool profiling,
                     int expected_exit = kExitBadInput) {
  try {
    place_tile(m, in, profiling);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), expected_exit) << e.what();
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  return "";
}

}  // namespace tilevit::compiler::placement_test

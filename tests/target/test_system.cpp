// Multi-chip systems: the [system] and [link A-B] sections round-trip, the embedded
// c600xN lines hold the derived C600 link figures, link costs follow the stated rule,
// and bad systems are refused in one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/error.hpp"
#include "target/machine.hpp"
#include "target/system.hpp"
#include "machine_errors.hpp"

namespace tilevit::target {
namespace {

std::string test16_plus(const std::string& sections) { return std::string(test16_text()) + sections; }

const char* const kTwoChips =
    "\n[system]\nchips = 2\ntopology = line\n\n[link 0-1]\nbytes_per_second = 31_250_000_000\nlatency_cycles = 1500\n";

TEST(System, OneChipDescriptionsHaveNoSystemText) {
  EXPECT_EQ(c600().system.chips, 1u);
  EXPECT_TRUE(c600().system.links.empty());
  EXPECT_EQ(to_text(c600()).find("[system]"), std::string::npos);
  EXPECT_FALSE(to_json(c600()).contains("system"));
}

TEST(System, ParsesAndRoundTrips) {
  const MachineDescription m = parse_machine(test16_plus(kTwoChips), "two.machine");
  ASSERT_EQ(m.system.chips, 2u);
  ASSERT_EQ(m.system.links.size(), 1u);
  EXPECT_EQ(m.system.links[0].bytes_per_second, 31'250'000'000u);
  EXPECT_EQ(m.system.links[0].latency_cycles, 1500u);
  EXPECT_EQ(parse_machine(to_text(m), "again"), m);
  EXPECT_EQ(m, test16x2());
  EXPECT_EQ(one_chip(m), test16());
}

TEST(System, EmbeddedC600LinesUseTheDerivedLinkFigures) {
  for (auto [name, chips] : {std::pair{"c600x2", 2u}, {"c600x4", 4u}, {"c600x8", 8u}}) {
    const MachineDescription* m = builtin_machine(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->system.chips, chips);
    ASSERT_EQ(m->system.links.size(), chips - 1);
    for (const ChipLink& l : m->system.links) {
      EXPECT_EQ(l.to, l.from + 1);
      EXPECT_EQ(l.bytes_per_second, 1'000'000'000'000u / 8 / 2 / 4 * 2);  // 1 Tbps both ways, 4 links, 2 per cable
    }
    EXPECT_EQ(one_chip(*m), c600());
    EXPECT_EQ(parse_machine(to_text(*m), name), *m);
    const nlohmann::json j = to_json(*m);
    EXPECT_EQ(j["system"]["chips"], chips);
    EXPECT_EQ(j["system"]["link_latency_calibrated"], false);
  }
}

TEST(System, LinkCostIsLatencyPerHopPlusBytesAtTheLinkRate) {
  const MachineDescription& m = c600x4();
  EXPECT_EQ(link_cost(m, 1, 1, 1000).cycles(), 0u);
  // 31.25 GB/s at 1.5 GHz: 20.833 B per cycle; 1 MB -> ceil(48000) cycles
  const LinkCost one = link_cost(m, 0, 1, 1'000'000);
  EXPECT_EQ(one.hops, 1u);
  EXPECT_EQ(one.transfer_cycles, 48'000u);
  EXPECT_EQ(one.cycles(), 48'000u + kDefaultLinkLatencyCycles);
  const LinkCost three = link_cost(m, 3, 0, 1'000'000);
  EXPECT_EQ(three.hops, 3u);
  EXPECT_EQ(three.latency_cycles, 3u * kDefaultLinkLatencyCycles);
  EXPECT_EQ(three.transfer_cycles, 48'000u);
  EXPECT_EQ(link_cost(m, 0, 1, 1).transfer_cycles, 1u);  // rounded up
}

// A system's sections after the test16 chip, and a piece of the error it must give.
struct BadSystem {
  const char* sections;
  const char* message;
};

const BadSystem kBadSystems[] = {
    {"[system]\nchips = 3\ntopology = line\n[link 0-1]\nbytes_per_second = 1\nlatency_cycles = 1\n",
     "links do not connect chip 2"},
    {"[system]\nchips = 2\ntopology = line\n[link 0-5]\nbytes_per_second = 1\nlatency_cycles = 1\n", "unknown chip 5"},
    {"[system]\nchips = 3\ntopology = line\n[link 0-2]\nbytes_per_second = 1\nlatency_cycles = 1\n",
     "neighbouring chips only"},
    {"[system]\nchips = 2\ntopology = ring\n", "expected one of line"},
    {"[link 0-1]\nbytes_per_second = 1\nlatency_cycles = 1\n", "need a [system]"},
    {"[system]\nchips = 2\ntopology = line\n[link 0-1]\nbytes_per_second = 0\nlatency_cycles = 1\n",
     "bytes_per_second"},
    {"[system]\nchips = 2\ntopology = line\n[link zero]\nbytes_per_second = 1\nlatency_cycles = 1\n",
     "expected two chips"},
    {"[system]\nchips = 2\ntopology = line\n[link 0-1]\nbytes_per_second = 1\nlatency_cycles = 1\n"
     "[link 1-0]\nbytes_per_second = 1\nlatency_cycles = 1\n",
     "given twice"},
};

TEST(System, BadSystemsAreOneLineErrors) {
  for (const BadSystem& bad : kBadSystems)
    EXPECT_NE(parse_error(test16_plus(std::string("\n") + bad.sections)).find(bad.message), std::string::npos)
        << bad.sections;
}

}  // namespace
}  // namespace tilevit::target

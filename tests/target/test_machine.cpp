// Machine description: the shipped C600 matches MACHINE.md, the text format round-trips,
// and every class of bad input is refused with a message naming file, line and field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"
#include "machine_errors.hpp"

namespace tilevit::target {
namespace {

// `text` (default: the C600's) with the first occurrence of `from` replaced by `to`.
std::string c600_with(const std::string& from, const std::string& to, std::string text = std::string(c600_text())) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  text.replace(pos, from.size(), to);
  return text;
}

// 1-based line of the first occurrence of `needle` in the C600 text.
int c600_line_of(const std::string& needle) {
  const std::string text(c600_text());
  const auto pos = text.find(needle);
  EXPECT_NE(pos, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

std::string at(int line) { return "bad.machine:" + std::to_string(line) + ":"; }

TEST(Machine, C600MatchesMachineMd) {
  const MachineDescription& m = c600();
  EXPECT_EQ(m.name, "C600");
  EXPECT_EQ(m.tiles, 1472u);
  EXPECT_EQ(m.rows, 23u);
  EXPECT_EQ(m.columns, 64u);
  EXPECT_EQ(m.clock_hz, 1'500'000'000u);
  EXPECT_EQ(m.workers, 6u);
  EXPECT_EQ(m.launch_cycles, 11u);
  EXPECT_EQ(m.sram_base, 0x4C000u);
  EXPECT_EQ(m.sram_size, 638'976u);
  EXPECT_EQ(m.sram_end(), 0xE8000u);
  EXPECT_EQ(m.vector_alignment, 8u);
  EXPECT_EQ(m.matrix_alignment, 32u);
  EXPECT_EQ(m.exchange_send_bytes_per_cycle, 4u);
  EXPECT_EQ(m.exchange_receive_bytes_per_cycle, 4u);
  EXPECT_EQ(m.phase_overhead_cycles, 270u);  // median of the 12 measured residuals
  EXPECT_EQ(m.max_transfer_words, 4148u);
  EXPECT_EQ(m.transit_cycles(0), 52u);
  EXPECT_EQ(m.transit_cycles(1471), 52u + 2u * 22u);  // the last of 23 physical rows
  EXPECT_EQ(m.flop_per_cycle_fp32, 32u);
  EXPECT_EQ(m.flop_per_cycle_fp16, 128u);
  EXPECT_EQ(m.flop_per_cycle_fp8, 256u);

  ASSERT_EQ(m.regions.size(), 2u);
  const MemoryRegion& standard = m.regions[0];
  EXPECT_EQ(standard.name, "standard");
  EXPECT_EQ(standard.start, 0x4C000u);
  EXPECT_EQ(standard.end, 0x80000u);
  EXPECT_EQ(standard.size(), 208u * 1024);
  EXPECT_EQ(standard.size() / standard.element_bytes, 13u);
  EXPECT_EQ(standard.load_bytes_per_cycle, 8u);
  EXPECT_TRUE(standard.code);
  const MemoryRegion& interleaved = m.regions[1];
  EXPECT_EQ(interleaved.start, 0x80000u);
  EXPECT_EQ(interleaved.end, 0xE8000u);
  EXPECT_EQ(interleaved.unit_bytes(), 32u * 1024);
  EXPECT_EQ(interleaved.load_bytes_per_cycle, 16u);
  EXPECT_FALSE(interleaved.code);
  EXPECT_EQ(m.region_at(0x50000), &m.regions[0]);
  EXPECT_EQ(m.region_at(0xE7FFF), &m.regions[1]);
  EXPECT_EQ(m.region_at(0xE8000), nullptr);

  ASSERT_EQ(m.reserved.size(), 4u);  // sorted by start
  EXPECT_EQ(m.reserved[0].kind, ReservedKind::exchange);
  EXPECT_EQ(m.reserved[0].start, 0x50000u);
  EXPECT_EQ(m.reserved[0].end(), 0x58000u);
  EXPECT_EQ(m.reserved[1].kind, ReservedKind::runtime);
  EXPECT_EQ(m.reserved[1].start, 0x58000u);
  EXPECT_EQ(m.reserved[1].size, 1760u);
  EXPECT_EQ(m.reserved[2].kind, ReservedKind::profiling);
  EXPECT_EQ(m.reserved[2].start, 0x80000u);
  EXPECT_EQ(m.reserved[2].size, 896u);
  EXPECT_EQ(m.reserved[2].when, ReservedWhen::profiling);
  EXPECT_EQ(m.reserved[3].kind, ReservedKind::unreachable);
  EXPECT_EQ(m.reserved[3].start, 0xE7BB0u);
  EXPECT_EQ(m.reserved[3].end(), 0xE8000u);
  EXPECT_EQ(m.free_bytes_per_tile(false), 638'976u - 32'768 - 1'760 - 1'104);
  EXPECT_EQ(m.free_bytes_per_tile(true), m.free_bytes_per_tile(false) - 896);
}

TEST(Machine, C600DerivedFigures) {
  const MachineDescription& m = c600();
  EXPECT_NEAR(peak_flops(m, m.flop_per_cycle_fp16) * 1e-12, 282.6, 0.05);
  EXPECT_NEAR(peak_flops(m, m.flop_per_cycle_fp8) * 1e-12, 565.2, 0.05);
  const nlohmann::json j = to_json(m);
  EXPECT_EQ(j["derived"]["total_sram_bytes"].get<std::uint64_t>(), 1472ull * 638'976);
  EXPECT_NEAR(j["derived"]["total_sram_bytes"].get<double>() / (1 << 20), 897.0, 0.5);
  EXPECT_EQ(j["regions"].size(), 2u);
  EXPECT_EQ(j["costs"]["generation"], "2026-09-11");
  EXPECT_EQ(j["costs"]["gemm_fp8_per_row"].get<double>(), 4.01);
}

TEST(Machine, Test16SharesTheC600Tile) {
  const MachineDescription& t = test16();
  EXPECT_EQ(t.name, "test16");
  EXPECT_EQ(t.tiles, 16u);
  EXPECT_EQ(t.rows * t.columns, 16u);
  EXPECT_EQ(t.sram_base, c600().sram_base);
  EXPECT_EQ(t.sram_size, c600().sram_size);
  EXPECT_EQ(t.regions, c600().regions);
  EXPECT_EQ(t.reserved, c600().reserved);
  // The same coefficients, but test16 names no kernel generation: nothing on it is calibrated.
  EXPECT_TRUE(t.costs.generation.empty());
  CostCoefficients costs = t.costs;
  costs.generation = c600().costs.generation;
  EXPECT_EQ(costs, c600().costs);
  EXPECT_EQ(t.workers, c600().workers);
}

TEST(Machine, CanonicalTextRoundTrips) {
  for (const MachineDescription* m : {&c600(), &test16()}) {
    const std::string text = to_text(*m);
    const MachineDescription back = parse_machine(text, "canonical");
    EXPECT_EQ(back, *m) << text;
    EXPECT_EQ(to_text(back), text);
  }
  // Fractional coefficients survive exactly.
  MachineDescription odd = c600();
  odd.costs.gelu_per_vector = 0.1 + 0.2;
  odd.costs.add_base = 1e-7;
  odd.name = "odd-machine v2";
  EXPECT_EQ(parse_machine(to_text(odd), "odd"), odd);
}

TEST(Machine, EmbeddedTextIsTheShippedFile) {
  const std::string dir = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/";
  EXPECT_EQ(read_text_file(dir + "c600.machine", 1 << 20), std::string(c600_text()));
  EXPECT_EQ(read_text_file(dir + "test16.machine", 1 << 20), std::string(test16_text()));
  EXPECT_EQ(load_machine(dir + "c600.machine"), c600());
}

TEST(Machine, NotationAccepted) {
  // Hex, underscores, comments after values, blank lines, CRLF line ends.
  std::string text = c600_with("tiles = 1472", "tiles = 0x5C0   # hex");
  text = c600_with("sram_size = 0x9C000", "\n\n  sram_size   =   638_976", text);
  EXPECT_EQ(parse_machine(text, "x"), c600());
  std::string crlf;
  for (char c : std::string(c600_text())) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(parse_machine(crlf, "crlf"), c600());
}

TEST(MachineErrors, EmptyFile) {
  EXPECT_NE(parse_error("").find(at(1) + " empty file"), std::string::npos);
  EXPECT_NE(parse_error("  \n\n").find("empty file"), std::string::npos);
}

TEST(MachineErrors, WrongVersionLine) {
  const std::string v2 = parse_error(c600_with("tilevit-machine 1", "tilevit-machine 2"));
  EXPECT_NE(v2.find(at(1) + " unsupported format version \"2\""), std::string::npos) << v2;
  const std::string other = parse_error(c600_with("tilevit-machine 1", "[machine]"));
  EXPECT_NE(other.find(at(1) + " expected first line \"tilevit-machine 1\""), std::string::npos) << other;
}

TEST(MachineErrors, MissingKey) {
  const std::string message = parse_error(c600_with("clock_hz = 1_500_000_000\n", ""));
  EXPECT_EQ(message, at(c600_line_of("[machine]")) + " [machine] clock_hz: missing required key");
  const std::string region = parse_error(c600_with("load_bytes_per_cycle = 16\n", ""));
  EXPECT_EQ(region, at(c600_line_of("[region interleaved]")) + " [region interleaved] load_bytes_per_cycle: missing required key");
}

TEST(MachineErrors, MissingSection) {
  std::string text(c600_text());
  text = text.substr(0, text.find("\n[costs]"));
  EXPECT_NE(parse_error(text).find("missing required section [costs]"), std::string::npos);
}

TEST(MachineErrors, UnknownKeyAndSection) {
  const int line = c600_line_of("clock_hz = ");
  EXPECT_EQ(parse_error(c600_with("clock_hz = ", "clock_hertz = ")), at(line) + " [machine] clock_hertz: unknown key");
  const std::string section = parse_error(c600_with("[exchange]", "[exchanges]"));
  EXPECT_EQ(section, at(c600_line_of("[exchange]")) + " unknown section [exchanges]");
}

TEST(MachineErrors, BadInteger) {
  const int line = c600_line_of("sram_size = ");
  EXPECT_EQ(parse_error(c600_with("sram_size = 0x9C000", "sram_size = abc")),
            at(line) + " [memory] sram_size: expected an integer, got \"abc\"");
  EXPECT_NE(parse_error(c600_with("sram_size = 0x9C000", "sram_size = -5")).find("expected an integer"), std::string::npos);
  EXPECT_NE(parse_error(c600_with("sram_size = 0x9C000", "sram_size = 12__")).find("expected an integer"),
            std::string::npos);
  EXPECT_NE(parse_error(c600_with("tiles = 1472", "tiles = 99999999999999999999999")).find("[machine] tiles:"),
            std::string::npos);
  EXPECT_NE(parse_error(c600_with("tiles = 1472", "tiles = 0")).find("[machine] tiles: value 0 is out of range"),
            std::string::npos);
  EXPECT_NE(parse_error(c600_with("gelu_per_vector = 121", "gelu_per_vector = -1")).find("[costs] gelu_per_vector: expected a non-negative"),
            std::string::npos);
  EXPECT_NE(parse_error(c600_with("code = yes", "code = maybe")).find("[region standard] code: expected yes or no"),
            std::string::npos);
}

// Issue 34, item 13: the device model maps a chip's SRAM on the host; more than it can
// hold is the file's error, not a run's failure to map it.
TEST(MachineErrors, ChipSramBeyondWhatTheHostModelHoldsIsRefused) {
  const int line = c600_line_of("sram_size = ");
  EXPECT_EQ(parse_error(c600_with("sram_size = 0x9C000", "sram_size = 0x80000000")),
            at(line) + " [memory] sram_size: 1472 tiles x 2147483648 B is more SRAM than the host model of a chip holds "
                       "(4294967296 B, 4 GiB)");
  // 1472 x 2,917,776 B = 4,294,966,272 B is within the bound (the regions stay as they are).
  EXPECT_NO_THROW(parse_machine(c600_with("sram_size = 0x9C000", "sram_size = 2917776"), "bad.machine"));
  EXPECT_NE(parse_error(c600_with("sram_size = 0x9C000", "sram_size = 2917777")).find("4 GiB"), std::string::npos);
}

TEST(MachineErrors, RegionOutsideSram) {
  const int line = c600_line_of("end = 0xE8000");
  EXPECT_EQ(parse_error(c600_with("end = 0xE8000", "end = 0xF0000")),
            at(line) + " [region interleaved] end: 0xF0000 must be above start 0x80000 and at most the SRAM end 0xE8000");
  EXPECT_NE(parse_error(c600_with("start = 0x4C000", "start = 0x40000")).find("[region standard] start: 0x40000 is outside"),
            std::string::npos);
  const std::string reserved = parse_error(c600_with("start = 0xE7BB0", "start = 0xE7C00"));
  EXPECT_NE(reserved.find(at(c600_line_of("start = 0xE7BB0")) + " [reserved unreachable_tail] start:"), std::string::npos)
      << reserved;
}

TEST(MachineErrors, OverlappingRegions) {
  const std::string message = parse_error(c600_with("start = 0x80000\nend", "start = 0x78000\nend"));
  EXPECT_NE(message.find(at(c600_line_of("[region interleaved]")) + " [region interleaved] start: 0x78000-0xE8000 overlaps "
                                                                     "[region standard]"),
            std::string::npos)
      << message;
  const std::string reserved = parse_error(c600_with("size = 1760", "size = 0x30000"));
  EXPECT_NE(reserved.find("overlaps"), std::string::npos) << reserved;
}

TEST(MachineErrors, StructuralChecks) {
  EXPECT_NE(parse_error(c600_with("rows = 23", "rows = 24")).find("[machine] rows: 24 rows x 64 columns != 1472 tiles"),
            std::string::npos);
  EXPECT_NE(parse_error(c600_with("matrix_alignment = 32", "matrix_alignment = 24")).find("power of two"), std::string::npos);
  EXPECT_NE(parse_error(c600_with("tiles = 1472", "tiles = 1472\ntiles = 1472")).find("repeats the key"), std::string::npos);
  EXPECT_NE(parse_error(c600_with("kind = runtime", "kind = stack")).find("expected one of exchange, runtime"),
            std::string::npos);
  EXPECT_NE(parse_error(c600_with("[region standard]", "[region]")).find("needs a name"), std::string::npos);
  EXPECT_NE(parse_error(c600_with("worker_grain = 16", "worker_grain = 18")).find("multiple of vector_elements"),
            std::string::npos);
  EXPECT_NE(parse_error("tilevit-machine 1\nname = x\n").find("outside any [section]"), std::string::npos);
}

TEST(MachineErrors, ExchangeRatesAreWholeWords) {
  const int line = c600_line_of("send_bytes_per_cycle = 4");
  EXPECT_EQ(parse_error(c600_with("send_bytes_per_cycle = 4", "send_bytes_per_cycle = 6")),
            at(line) + " [exchange] send_bytes_per_cycle: must be a multiple of 4 (whole 32-bit words), got 6");
  EXPECT_NE(parse_error(c600_with("receive_bytes_per_cycle = 4", "receive_bytes_per_cycle = 0"))
                .find("[exchange] receive_bytes_per_cycle: value 0 is out of range"),
            std::string::npos);
  EXPECT_EQ(parse_error(c600_with("receive_bytes_per_cycle = 4", "receive_bytes_per_cycle = 8")), "");
}

TEST(MachineErrors, LoadNamesThePath) {
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_test_machine_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "broken.machine").string();
  std::ofstream(path) << c600_with("sram_size = 0x9C000", "sram_size = abc");
  try {
    load_machine(path);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":" + std::to_string(c600_line_of("sram_size")) + ": [memory] sram_size", 0),
              0u)
        << e.what();
  }
  EXPECT_THROW(load_machine((dir / "absent.machine").string()), Error);
  std::filesystem::remove_all(dir);
}

// Fuzz findings: element_bytes x unit_elements wrapped to 0 (SIGFPE), a file of many keys
// took half a minute (each key compared with every earlier one), and nothing bounded the
// text handed in from a package's machine section.
TEST(MachineErrors, UnitBytesCannotWrapToZero) {
  EXPECT_NE(parse_error(c600_with("element_bytes = 0x4000\nunit_elements = 2", "element_bytes = 0x80000000\nunit_elements = 2"))
                .find("[region interleaved] element_bytes: value 0x80000000 is out of range [1, 65536]"),
            std::string::npos);
}

TEST(MachineErrors, ManyKeysAreCheckedInLinearTime) {
  std::string text = "tilevit-machine 1\n[machine]\n";
  for (int i = 0; text.size() < (1 << 20) - 32; ++i) text += "k" + std::to_string(i) + " = 1\n";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(parse_error(text).find("missing required section"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(parse_error(text + "k0 = 2\n").find("k0: repeats the key at line 3"), std::string::npos);
  EXPECT_NE(parse_error(c600_with("[tile]", "[tile]\nworkers = 6\n[tile]")).find("section [tile] repeats the one at line"),
            std::string::npos);
}

TEST(MachineErrors, SizeAndSectionCountAreBounded) {
  EXPECT_NE(parse_error(std::string(c600_text()) + std::string(1 << 20, '#')).find("exceeds the limit of 1048576"),
            std::string::npos);
  std::string many(c600_text());
  for (int i = 0; i < 300; ++i)
    many += "[reserved r" + std::to_string(i) + "]\nkind = runtime\nstart = 0x4C000\nsize = 4\nwhen = always\n";
  EXPECT_NE(parse_error(many).find("more than 256 [region] and [reserved] sections"), std::string::npos);
}

}  // namespace
}  // namespace tilevit::target

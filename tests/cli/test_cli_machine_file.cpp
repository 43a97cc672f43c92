// Machine files end to end: what a description may ask of the host is refused when the
// file is read, one line naming the file and key, exit 3 (issue 34, item 13).
#include <fstream>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::CliTest;
using test_support::last_line;
using test_support::read_all;
using test_support::run_tilevit;

namespace {

class MachineFile : public CliTest {};

// test16 with 2 GiB of SRAM per tile: 32 GiB for the device model to map.
TEST_F(MachineFile, SramTheHostModelCannotHoldIsRefusedAtTheFile) {
  std::string text = read_all(std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine");
  const auto at = text.find("sram_size = 0x9C000");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 19, "sram_size = 0x80000000");
  const std::string machine = path("huge.machine");
  std::ofstream(machine) << text;
  for (const std::string command : {"machine --machine " + machine,
                                    "compile --preset small --layers 1 --machine " + machine,
                                    "run --preset small --layers 1 --inferences 1 --machine " + machine + " --out " +
                                        path("out")}) {
    const auto r = run_tilevit(command);
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << command << ": " << r.err;
    EXPECT_NE(last_line(r.err).find(machine + ":"), std::string::npos) << r.err;
    EXPECT_NE(last_line(r.err).find("[memory] sram_size: 16 tiles x 2147483648 B is more SRAM than the host model"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path("out"))) << "refused before the run made its directory";
}

}  // namespace

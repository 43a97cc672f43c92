// Machine files end to end: what a description may ask of the host is refused when the
// file is read, one line naming the file and key, exit 3 (issue 34, item 13).
#include <sys/resource.h>

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

// What the bound cannot foresee (a host with less memory, a ulimit) is a resource
// problem, exit 4, not an internal error (70).
TEST_F(MachineFile, TileMemoryTheHostCannotMapIsAResourceError) {
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &before), 0);
  rlimit limited = before;
  limited.rlim_cur = std::min<rlim_t>(before.rlim_max, rlim_t{700} << 20);  // the C600's SRAM is 897 MiB
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &limited), 0);
  const auto r = run_tilevit("run --preset small --layers 1 --inferences 1 --no-profile --optimization-steps 0 --threads 1 "
                             "--out " + path("out"));
  ::setrlimit(RLIMIT_AS, &before);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(last_line(r.err).find("device: cannot map 940666880 B of tile memory for 1472 tiles"), std::string::npos)
      << r.err;
}

}  // namespace

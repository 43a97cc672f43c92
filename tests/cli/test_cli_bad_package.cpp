// Packages whose kernel calls break their kind's signature: `verify` rejects them (exit 1;
// 3 when the package cannot even be decoded), and the commands that load a package
// (`run`, `inspect`, `memory-map`) refuse them in one line with exit 3, never 70.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "../compiler/small_model.hpp"
#include "../compiler/verify_probes.hpp"
#include "cli_runner.hpp"
#include "package/program_codec.hpp"
#include "support/atomic_file.hpp"

using namespace tilevit;
using test_support::run_tilevit;

TEST(CliBadPackage, SignatureProbesAreRejectedInOneLine) {
  const auto machine = target::test16();
  const auto compiled = test_support::compile_small();
  const auto [step, index] = test_support::first_probe_gemm(compiled.executable.program);
  ASSERT_NE(step, UINT32_MAX);
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_bad_package_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& probe : test_support::gemm_call_mutations()) {
    auto broken = compiled;
    probe.mutate(broken.executable.program.steps[step].compute[index]);
    const std::string path = (dir / (probe.name + ".tvpkg")).string();
    write_bytes_atomically(path, package::encode_package(broken.executable).bytes());

    const auto verified = run_tilevit("verify " + path);
    EXPECT_EQ(verified.exit_code, probe.name == "not_a_kind" ? 3 : 1) << probe.name << verified.out << verified.err;
    EXPECT_NE((verified.out + verified.err).find(probe.expected), std::string::npos) << probe.name;
    for (const std::string& command : {"inspect " + path, "memory-map " + path + " --out " + (dir / "map").string(),
                                      "run --package " + path + " --out " + (dir / "run").string()}) {
      const auto r = run_tilevit(command);
      EXPECT_EQ(r.exit_code, 3) << command << "\n" << r.err;
      const std::string line = test_support::last_line(r.err);
      EXPECT_NE(line.find(probe.expected), std::string::npos) << command << ": " << line;
      EXPECT_NE(line.find(path), std::string::npos) << command << ": " << line;
    }
  }
  std::filesystem::remove_all(dir);
}

// Issue #22, item 7: a placement label or op name that is not printable UTF-8 (it would be
// printed, and written into memory.json) fails `verify`, naming the tile and allocation;
// `verify --json` still prints JSON; the commands that load the package refuse it.
TEST(CliBadPackage, LabelsThatAreNotPrintableUtf8AreRejected) {
  const auto compiled = test_support::compile_small(1);
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_bad_label_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct Case {
    std::string name, expected;
    std::function<void(compiler::CompiledProgram&)> mutate;
  };
  const std::uint32_t last = static_cast<std::uint32_t>(compiled.executable.program.allocations.size() - 1);
  const std::string last_tile = std::to_string(compiled.executable.program.allocations.back().tile);
  const std::vector<Case> cases = {
      {"bad_utf8", "tile " + last_tile + ": the label of allocation " + std::to_string(last) + " is not printable UTF-8",
       [](compiler::CompiledProgram& p) { p.allocations.back().request.label = "x\xff\xfe"; }},
      {"control", "tile " + last_tile + ": the label of allocation " + std::to_string(last) + " is not printable UTF-8 (byte 1",
       [](compiler::CompiledProgram& p) { p.allocations.back().request.label = "x\x1b[2J"; }},
      {"op_name", "op name 0 is not printable UTF-8", [](compiler::CompiledProgram& p) { p.op_names[0] = "\xc0\x80"; }},
  };
  for (const Case& c : cases) {
    auto broken = compiled;
    c.mutate(broken.executable.program);
    const std::string path = (dir / (c.name + ".tvpkg")).string();
    write_bytes_atomically(path, package::encode_package(broken.executable).bytes());
    const auto verified = run_tilevit("verify " + path);
    EXPECT_EQ(verified.exit_code, 1) << c.name << verified.err;
    EXPECT_NE(verified.out.find(c.expected), std::string::npos) << c.name << ": " << verified.out;
    const auto json = run_tilevit("verify --json " + path);
    EXPECT_EQ(json.exit_code, 1) << c.name << json.err;
    EXPECT_NO_THROW(EXPECT_FALSE(nlohmann::json::parse(json.out)["ok"].get<bool>())) << c.name << json.out;
    const auto run = run_tilevit("run --package " + path + " --out " + (dir / "run").string());
    EXPECT_EQ(run.exit_code, 3) << c.name << run.err;
    EXPECT_NE(test_support::last_line(run.err).find(c.expected), std::string::npos) << c.name << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "run" / "memory.json")) << c.name;
  }
  std::filesystem::remove_all(dir);
}

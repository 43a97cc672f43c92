// Packages whose kernel calls break their kind's signature: `verify` rejects them (exit 1;
// 3 when the package cannot even be decoded), and the commands that load a package
// (`run`, `inspect`, `memory-map`) refuse them in one line with exit 3, never 70.
#include <gtest/gtest.h>

#include <filesystem>

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

// Issue #34, items 11, 12, 16, 17 and 18: messages and reports that said the wrong thing,
// ran values together, cut names, or mixed outputs. One test per behaviour, through the
// binary, on the small model and the 16-tile machine (each run about a second).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_runner.hpp"

namespace fs = std::filesystem;
using tilevit::test_support::expect_error_line;
using tilevit::test_support::run_tilevit;

namespace {
class ReadingReportsCli : public tilevit::test_support::CliTest {
 protected:
  std::string small() const { return "--preset small --machine " + machine_; }
  // A package of the small model (FP8 scale -4, the default), compiled once per test.
  std::string package() {
    const std::string p = path("p.tvpkg");
    if (!fs::exists(p)) EXPECT_EQ(run_tilevit("compile " + small() + " --profile --package " + p).exit_code, 0);
    return p;
  }
  // The profile of one run of the small model (kernel granularity: a sample per kernel;
  // phase: one per tile and step, naming the operations fused in it).
  std::string profile(const std::string& name, const std::string& flags = "--profile-granularity kernel") {
    const std::string out = path(name);
    const auto r = run_tilevit("run " + small() + " --inferences 1 --no-reference --out " + out + " " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out + "/profile.tvprof";
  }
  const std::string machine_ = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
}  // namespace

// 11. A scale that differs from the package's: both flags and values, once each, one line.
TEST_F(ReadingReportsCli, ScaleMismatchNamesBothScalesInFlagForm) {
  const std::string p = package();
  const std::string line = expect_error_line("reference --package " + p + " --fp8-scale -3", 2,
                                        {"built with --fp8-scale -4, --fp8-scale -3 asked", "--fp8-scale"});
  EXPECT_LT(line.size(), 260u) << line;  // not every role's scale run together
  EXPECT_EQ(line.find("embedding="), std::string::npos) << line;
}

// 11. --calibrated-scales against a package built with --fp8-scale -4 says so.
TEST_F(ReadingReportsCli, CalibratedScalesMismatchSaysWhatThePackageWasBuiltWith) {
  const std::string p = package();
  const std::string line = expect_error_line("run --package " + p + " --calibrated-scales --out " + path("o"), 2,
                                        {"built with --fp8-scale -4, --calibrated-scales asked"});
  EXPECT_EQ(line.find("built with --calibrated-scales"), std::string::npos) << line;
}

// 11. The package's own scale is no mismatch (the roles a package does not record were compared).
TEST_F(ReadingReportsCli, ThePackagesOwnFp8ScaleIsAccepted) {
  const std::string p = path("p3.tvpkg");
  ASSERT_EQ(run_tilevit("compile " + small() + " --fp8-scale -3 --package " + p).exit_code, 0);
  const auto r = run_tilevit("reference --package " + p + " --fp8-scale -3 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// 12. A one-chip package on a machine of several chips: the flag and the chips, not a section.
TEST_F(ReadingReportsCli, OneChipPackageOnSeveralChipsNamesTheMachineFlag) {
  const std::string p = package();
  const std::string line = expect_error_line("run --package " + p + " --machine c600x2 --out " + path("o"), 2,
                                        {p, "one-chip package", "--machine c600x2", "2 chips"});
  EXPECT_EQ(line.find("missing required section"), std::string::npos) << line;
}

// 12. A profile where a package is expected says what it is, as the reverse case does.
TEST_F(ReadingReportsCli, ProfileGivenAsAPackageSaysItIsAProfile) {
  const std::string prof = profile("run");
  for (const std::string& command : std::vector<std::string>{"inspect ", "verify ", "memory-map --out " + path("m") + " ",
                                                         "run --out " + path("o") + " --package "}) {
    const std::string line = expect_error_line(command + prof, 3, {prof, "is a profile, not a package"});
    EXPECT_EQ(line.find("missing required section"), std::string::npos) << line;
  }
  expect_error_line("profile query " + package(), 3, {"is a package, not a profile"});
}

// 16. A tile that only copies within its SRAM has an operation name in query and diff.
TEST_F(ReadingReportsCli, LocalCopiesHaveAnOperationName) {
  const std::string prof = profile("run");
  const auto r = run_tilevit("profile query " + prof + " --group-by operation --limit 1000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool copies = false;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& row : j["rows"]) {
    EXPECT_FALSE(row["key"].get<std::string>().empty()) << row.dump();
    copies |= row["key"] == "(local copy)";
  }
  EXPECT_TRUE(copies) << r.out;
}

// 16. Names are never cut: the table's first column is as wide as its longest name, aligned.
TEST_F(ReadingReportsCli, QueryShowsWholeOperationNamesAligned) {
  const std::string prof = profile("run", "--profile-granularity phase");
  const auto j = nlohmann::json::parse(
      run_tilevit("profile query " + prof + " --group-by operation --limit 1000 --json").out);
  std::size_t longest = 0;
  for (const auto& row : j["rows"]) longest = std::max(longest, row["key"].get<std::string>().size());
  ASSERT_GT(longest, 40u) << "the small model's fused names are longer than the old cut";
  const auto text = run_tilevit("profile query " + prof + " --group-by operation --limit 1000");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto lines = lines_of(text.out);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("operation ", 0) == 0; });
  ASSERT_NE(header, lines.end()) << text.out;
  const std::size_t samples_end = header->find("samples") + 7;
  for (const auto& row : j["rows"]) {
    const std::string key = row["key"];
    const auto line = std::find_if(header, lines.end(), [&](const std::string& l) { return l.rfind(key + " ", 0) == 0; });
    ASSERT_NE(line, lines.end()) << "whole name " << key << " not found in\n" << text.out;
    // The samples column ends where its header does on every row.
    EXPECT_EQ(line->find_first_not_of("0123456789,", line->find_first_not_of(' ', key.size())), samples_end) << *line;
  }
}

// 16. The same words no longer name two quantities: run's kernel cycles are each step's
// slowest tile, query's compute tile-cycles all tiles'.
TEST_F(ReadingReportsCli, RunAndQueryNameTheirCalibratedSharesApart) {
  const std::string out = path("run");
  const auto run = run_tilevit("run " + small() + " --inferences 1 --no-reference --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("kernel cycles: "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("each step's slowest tile"), std::string::npos) << run.out;
  const auto query = run_tilevit("profile query " + out + "/profile.tvprof");
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(query.out.find("kernel cycles"), std::string::npos) << query.out;
  EXPECT_NE(query.out.find("compute tile-cycles: "), std::string::npos) << query.out;
  EXPECT_NE(query.out.find("all tiles, every loop iteration"), std::string::npos) << query.out;
}

// 16. inspect counts the tiles used as compile does (tiles with a kernel call).
TEST_F(ReadingReportsCli, InspectCountsTilesUsedAsCompileDoes) {
  const std::string p = path("c600.tvpkg");
  const auto c = run_tilevit("compile --preset small --layers 1 --package " + p + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto compiled = nlohmann::json::parse(c.out);
  const auto i = run_tilevit("inspect " + p + " --json");
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto inspected = nlohmann::json::parse(i.out);
  EXPECT_EQ(inspected["tiles_used"], compiled["tiles_used"]);
  EXPECT_GE(inspected["tiles_holding_data"].get<int>(), inspected["tiles_used"].get<int>());
  const auto text = run_tilevit("inspect " + p);
  EXPECT_NE(text.out.find("tiles used " + std::to_string(compiled["tiles_used"].get<int>()) + " of 1472"),
            std::string::npos)
      << text.out;
}

// 16. diff: each table under a header, and the "#N" of repeated step labels explained.
TEST_F(ReadingReportsCli, DiffTablesHaveHeadersAndExplainNumberedSteps) {
  const std::string a = profile("a"), b = profile("b", "--profile-granularity kernel --exchange-stream-words 64");
  const auto r = run_tilevit("profile diff " + a + " " + b + " --limit 1000");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("steps that changed most"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("operations that changed most"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  op  "), std::string::npos) << "an operation without a name: " << r.out;
  if (r.out.find(" #2 ") != std::string::npos)
    EXPECT_NE(r.out.find("#N: the Nth execution"), std::string::npos) << r.out;
}

// 17. compile --package - --json: the package on stdout, the JSON report stderr's only line.
TEST_F(ReadingReportsCli, JsonReportIsStderrsOnlyLineWhenThePackageIsOnStdout) {
  const auto r = run_tilevit("compile " + small() + " --package - --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  const auto j = nlohmann::json::parse(r.err);
  EXPECT_EQ(j["package_bytes"].get<std::size_t>(), r.out.size());
}

// 17. A pipeline compile prints the package's path and SHA-256, as a one-chip compile does.
TEST_F(ReadingReportsCli, PipelineCompilePrintsThePackagePathAndSha256) {
  const std::string p = path("pipe.tvpkg");
  const std::string args = "compile --preset siglip2-tiny --machine test16x2 --package " + p;
  const auto text = run_tilevit(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto j = nlohmann::json::parse(run_tilevit(args + " --json").out);
  EXPECT_NE(text.out.find("package: " + p + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("package_sha256: " + j["package_sha256"].get<std::string>() + "\n"), std::string::npos)
      << text.out;
}

// 17. --save-embeddings into the --out directory the run creates.
TEST_F(ReadingReportsCli, SaveEmbeddingsIntoTheNewOutDirectory) {
  const std::string out = path("new");
  const auto r = run_tilevit("run " + small() + " --inferences 1 --no-reference --no-profile --out " + out +
                             " --save-embeddings " + out + "/x.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(out + "/x.npy"));
  // Elsewhere, a missing directory is still refused before any work.
  expect_error_line("run " + small() + " --inferences 1 --out " + path("o2") + " --save-embeddings " + path("none/x.npy"), 4,
               {"none/x.npy"});
}

// 18. Help cites only documents in the repository, lists the embedded machines, shows no
// refused default, and its compile examples are the fast ones.
TEST_F(ReadingReportsCli, HelpCitesExistingDocsListsMachinesAndShowsNoRefusedDefault) {
  const auto help = run_tilevit("compile --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::string all = help.out;
  for (const char* command : {"run", "reference", "inspect", "profile", "sweep", "machine", "verify", "memory-map"})
    all += run_tilevit(std::string(command) + " --help").out;
  const std::regex doc(R"(([A-Za-z_/]*[A-Z_]+\.md))");
  for (auto it = std::sregex_iterator(all.begin(), all.end(), doc); it != std::sregex_iterator(); ++it) {
    const std::string cited = (*it)[1];
    EXPECT_TRUE(fs::exists(std::string(TILEVIT_SOURCE_DIR) + "/" + cited)) << cited << " cited in --help";
  }
  const auto machine_line = help.out.find("--machine");
  ASSERT_NE(machine_line, std::string::npos);
  const std::string machine_help = help.out.substr(machine_line, help.out.find("\n  -", machine_line) - machine_line);
  for (const char* m : {"c600", "test16", "c600x2", "test16x2"})
    EXPECT_NE(machine_help.find(m), std::string::npos) << m << " in: " << machine_help;
  const auto no_fuse = help.out.find("--no-fuse-qkv");
  ASSERT_NE(no_fuse, std::string::npos);
  EXPECT_EQ(help.out.substr(no_fuse, help.out.find('\n', no_fuse) - no_fuse).find('{'), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("compile --layers 2 --profile"), std::string::npos) << help.out;
}

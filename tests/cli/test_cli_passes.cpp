// The compile pipeline as named passes: --list-passes, and --dump-after PASS against the
// expected text kept in tests/fixtures/dumps/ (tools/regenerate_dump_fixtures.sh).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::run_tilevit;

namespace {

std::string dump_command(const std::string& pass, const std::string& extra = "") {
  return "compile --preset small --layers 1 --machine " + std::string(TILEVIT_SOURCE_DIR) +
         "/src/target/machines/test16.machine --optimization-steps 0 --dump-after " + pass + " " + extra;
}
std::string expected_dump(const std::string& pass) {
  return test_support::read_all(std::string(TILEVIT_SOURCE_DIR) + "/tests/fixtures/dumps/small-1layer-test16." + pass +
                                ".txt");
}

}  // namespace

TEST(CompilePasses, ListPassesNamesThemInTheOrderTheyRun) {
  const auto r = run_tilevit("compile --list-passes --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json listed = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& p : listed.at("passes")) names.push_back(p.at("name"));
  EXPECT_EQ(names, (std::vector<std::string>{"lower-ops", "close-lifetimes", "split-local-copies", "schedule-waves",
                                             "schedule-exchange", "allocate-support", "place", "summarise"}));
  const auto text = run_tilevit("compile --list-passes");
  EXPECT_NE(text.out.find("schedule-exchange"), std::string::npos);
  const auto mixed = run_tilevit("compile --list-passes --preset small");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(last_line(mixed.err).find("--preset: not with --list-passes"), std::string::npos) << mixed.err;
}

TEST(CompilePasses, DumpAfterAPassIsTheKeptText) {
  for (const std::string pass : {"lower-ops", "place"}) {
    const auto r = run_tilevit(dump_command(pass));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string expected = expected_dump(pass);
    ASSERT_FALSE(expected.empty()) << "tests/fixtures/dumps: run tools/regenerate_dump_fixtures.sh";
    EXPECT_TRUE(r.out == expected) << "the dump after " << pass
                                   << " changed: review it, then tools/regenerate_dump_fixtures.sh";
    EXPECT_NE(r.err.find("estimated_cycles"), std::string::npos) << "the report goes to stderr";
  }
}

TEST(CompilePasses, PassesChangeWhatTheyOwnAndTheDumpIsTheSameAtAnyThreadCount) {
  const auto lowered = run_tilevit(dump_command("lower-ops", "--threads 1"));
  const auto scheduled = run_tilevit(dump_command("schedule-exchange", "--threads 2"));
  const auto placed = run_tilevit(dump_command("place", "--threads 2"));
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  // Before schedule-exchange every transfer is sent at cycle 0; after it, not all are.
  EXPECT_EQ(lowered.out.find("send 1"), std::string::npos);
  EXPECT_NE(scheduled.out.find("send 1"), std::string::npos);
  // Support allocations appear with allocate-support; placement gives addresses.
  EXPECT_EQ(scheduled.out.find("\"support.code\""), std::string::npos);
  EXPECT_NE(placed.out.find("\"support.code\""), std::string::npos);
  EXPECT_EQ(placed.out, run_tilevit(dump_command("place", "--threads 1")).out);
}

TEST(CompilePasses, AnUnknownPassIsAUsageErrorNamingThePasses) {
  const auto r = run_tilevit(dump_command("schedule"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(last_line(r.err).find("--dump-after schedule: no such pass (the passes: lower-ops, close-lifetimes"),
            std::string::npos)
      << r.err;
  const auto pipeline = run_tilevit("compile --preset siglip2-tiny --machine test16x2 --dump-after place");
  EXPECT_EQ(pipeline.exit_code, 2);
  EXPECT_NE(last_line(pipeline.err).find("--dump-after: not for a machine of several chips"), std::string::npos)
      << pipeline.err;
}

// Issue #22, "tried as a new user would": one test per numbered item, through the binary.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::read_all;
using test_support::run_tilevit;
namespace fs = std::filesystem;

namespace {
class NewUserCli : public test_support::CliTest {
 protected:
  // A tiny model on the 16-tile machine: a whole run takes about a second.
  std::string small() const { return "--preset small --machine " + machine_; }
  std::string small_run(const std::string& out) const {
    return "run " + small() + " --inferences 1 --out " + out;
  }
  void expect_error(const std::string& args, int code, std::initializer_list<std::string> needles) {
    test_support::expect_error_line(args, code, needles);
  }
  // A package of the small model, compiled once per test that needs one.
  std::string package() {
    const std::string p = path("p.tvpkg");
    if (!fs::exists(p)) EXPECT_EQ(run_tilevit("compile " + small() + " --profile --package " + p).exit_code, 0);
    return p;
  }
  const std::string machine_ = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
};

nlohmann::json run_json(const std::string& dir) { return nlohmann::json::parse(read_all(dir + "/run.json")); }
}  // namespace

// 1. A device is written in place, a symlink followed and kept, "-" is standard output.
TEST_F(NewUserCli, OutputsAreWrittenWhereTheyPoint) {
  ASSERT_EQ(run_tilevit("compile " + small() + " --package /dev/null").exit_code, 0);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  fs::create_directories(path("real"));
  fs::create_symlink(path("real/p.tvpkg"), path("link.tvpkg"));
  ASSERT_EQ(run_tilevit("compile " + small() + " --package " + path("link.tvpkg")).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(path("link.tvpkg")));
  EXPECT_GT(fs::file_size(path("real/p.tvpkg")), 0u);
  const auto r = run_tilevit("compile " + small() + " --package - --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_all(path("real/p.tvpkg")));                   // the package, byte for byte
  EXPECT_NE(r.err.find("\"package_sha256\""), std::string::npos);  // the report moved to stderr
  const auto search = run_tilevit("compile " + small() + " --optimization-steps 1 --optimization-report -");
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_NO_THROW(nlohmann::json::parse(search.out)) << search.out;  // only the search's report
}

// 2. --threads beyond 4 per core is a usage error, not a crash.
TEST_F(NewUserCli, ThreadsAreBounded) {
  for (const char* n : {"65535", "40000", "-1"}) expect_error("compile " + small() + " --threads " + n, 2, {"--threads"});
}

// 4. Flags that would be ignored are refused (or must match the package).
TEST_F(NewUserCli, IgnoredFlagsAreRefused) {
  const std::string p = package();
  const std::string c600 = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/c600.machine";
  for (const std::string& flag : std::vector<std::string>{"--layers 1", "--batch 2", "--preset so400m", "--fp8-scale 3", "--calibrated-scales",
                                 "--exchange-stream-words 512", "--machine " + c600}) {
    const auto r = run_tilevit("run --package " + p + " --out " + path("o") + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << r.err;
    EXPECT_NE(last_line(r.err).find(flag.substr(0, flag.find(' '))), std::string::npos)
        << flag << ": " << last_line(r.err);
  }
  expect_error("compile " + small() + " --weights /nonexistent.safetensors", 3, {"/nonexistent.safetensors"});
  expect_error("compile " + small() + " --seed 3", 2, {"--seed"});
  expect_error("compile " + small() + " --no-fuse-qkv", 2, {"--no-fuse-qkv"});
  expect_error("compile " + small() + " --calibrated-scales --fp8-scale 3", 2, {"--fp8-scale", "--calibrated-scales"});
  expect_error("compile " + small() + " --profile-granularity kernel", 2, {"--profile-granularity", "--profile"});
  expect_error("reference --preset small --fp32-only --save-device " + path("d.npy"), 2, {"--fp32-only"});
  expect_error(small_run(path("o")) + " --no-profile --profile-granularity kernel", 2, {"--no-profile"});
  expect_error(small_run(path("o")) + " --lock-timeout 5", 2, {"--lock-timeout", "--device-lock"});
  expect_error("compile " + small() + " --optimization-steps 0 --search-seconds 5", 2, {"--search-seconds", "--optimization-steps"});
  expect_error("compile " + small() + " --package - --optimization-steps 1 --optimization-report -", 2,
               {"only one output can go to standard output"});
  expect_error(small_run(path("o")) + " --optimization-steps 1 --optimization-report -", 2, {"--optimization-report -"});
  // Flags that say what the package holds are accepted.
  const auto ok = run_tilevit("run --package " + p + " --layers 2 --preset small --inferences 1 --out " + path("o"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// 5. The output directory: one run at a time, no stale temporaries, run.json lists
// every output with its SHA-256.
TEST_F(NewUserCli, OutputDirectoryIsOneUnit) {
  const std::string out = path("out");
  fs::create_directories(out);
  const std::string stale = out + "/model.tvpkg.tmp.999999999";  // no such process
  std::ofstream(stale) << "left by a killed run";
  const auto r = run_tilevit(small_run(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(stale));
  const auto j = run_json(out);
  for (const char* name : {"model.tvpkg", "embeddings.npy", "profile.tvprof", "model.html", "trace.json", "memory.json",
                           "memory.png", "memory.html"}) {
    ASSERT_TRUE(j["outputs"].contains(name)) << name;
    EXPECT_EQ(j["outputs"][name]["sha256"].get<std::string>().size(), 64u);
    EXPECT_EQ(j["outputs"][name]["bytes"].get<std::uint64_t>(), fs::file_size(out + "/" + name));
  }
  EXPECT_EQ(j["outputs"]["model.tvpkg"]["sha256"], j["package_sha256"]);
  // Another run holding the directory: refused before any work, nothing changed.
  const int fd = ::open((out + "/.tilevit.lock").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  expect_error(small_run(out), 4, {"another tilevit run"});
  ::close(fd);
  EXPECT_TRUE(fs::exists(out + "/run.json"));
  // A run that fails after the directory is taken leaves no run.json describing other files.
  expect_error(small_run(out) + " --image " + path("missing.png"), 3, {"missing.png"});
  EXPECT_FALSE(fs::exists(out + "/run.json"));
}

// 6. Inputs and outputs are checked before long work; the result comes before the viewers.
TEST_F(NewUserCli, LateFailuresComeEarlyOrAsWarnings) {
  auto early = [&](const std::string& args, int code, const std::string& needle) {
    const auto r = run_tilevit(args);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_NE(last_line(r.err).find(needle), std::string::npos) << last_line(r.err);
    EXPECT_EQ(r.err.find("compiling"), std::string::npos) << r.err;  // before the compiler ran
  };
  early(small_run(path("o")) + " --save-embeddings /nonexistent/e.npy", 4, "/nonexistent/e.npy");
  early(small_run(path("o")) + " --optimization-steps 1 --optimization-report /nonexistent/r.json", 4,
        "/nonexistent/r.json");
  early("compile " + small() + " --optimization-steps 1 --optimization-report /nonexistent/r.json", 4,
        "/nonexistent/r.json");
  std::ofstream(path("bad.png")) << "not an image";
  early(small_run(path("o")) + " --image " + path("bad.png"), 3, "bad.png");
  // A viewer that cannot be written: a warning, the result stands.
  const std::string out = path("out");
  fs::create_directories(out + "/model.html");  // a directory where the viewer goes
  const auto r = run_tilevit(small_run(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PASS"), std::string::npos);
  EXPECT_NE(r.err.find("warning: model.html not written"), std::string::npos) << r.err;
  const auto j = run_json(out);
  EXPECT_TRUE(j["passed"].get<bool>());
  EXPECT_EQ(j["warnings"].size(), 1u);
  EXPECT_TRUE(j["outputs"].contains("memory.html"));
}

// 7. User errors are not internal errors; with --json the error is a JSON object.
TEST_F(NewUserCli, ExitCodesFollowTheReadme) {
  std::ofstream(path("file")) << "x";
  expect_error(small_run(path("file")), 4, {"not a directory"});
  expect_error("run " + small() + " --out ''", 2, {"--out"});
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(path("ro"));
    fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
    expect_error(small_run(path("ro/out")), 4, {"ro"});
  }
  const auto r = run_tilevit("compile " + small() + " --bogus --json");
  EXPECT_EQ(r.exit_code, 2);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_NE(j["error"].get<std::string>().find("--bogus"), std::string::npos);
  const auto bad = run_tilevit("inspect /nonexistent.tvpkg --json");
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_EQ(nlohmann::json::parse(bad.out)["exit_code"], 3);
}

// 8. --batch states the machine's real limit, and the compiler agrees: batch 3 of So400m
// at 27 layers does not fit the C600, and the largest batch that does is 2.
TEST_F(NewUserCli, BatchHelpStatesTheRealLimit) {
  for (const char* cmd : {"run", "compile", "reference"})
    EXPECT_NE(run_tilevit(std::string(cmd) + " --help").out.find("27 layers on the C600: at most 3"), std::string::npos)
        << cmd;
  expect_error("compile --batch 4", 3, {"so400m-patch14-384 (27 layers, batch 4) does not fit C600: tile ",
                                        " B available", "largest that fits: --batch 3 (27 layers) or --layers "});
}

// 8. A model that does not fit says so in one line: the worst tile, bytes needed and
// available there, the largest batch and layer count that fit (each of them compiles).
// The small model on test16 with most of the interleaved region reserved.
TEST_F(NewUserCli, ModelThatDoesNotFitSaysWhatWould) {
  std::ifstream shipped(machine_);
  std::string text((std::istreambuf_iterator<char>(shipped)), {});
  const auto at = text.find("[exchange]");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "[reserved squeeze]\nkind = runtime\nstart = 0x80380\nsize = 0x5C000\nwhen = always\n\n");
  std::ofstream(path("squeezed.machine")) << text;
  const std::string squeezed = "compile --preset small --machine " + path("squeezed.machine");
  expect_error(squeezed + " --batch 4", 3,
               {"small (2 layers, batch 4) does not fit test16: tile ", " B in one piece at step ",
                " B is its largest free range", "largest that fits: --batch 3 (2 layers) or --layers 1 (batch 4)"});
  EXPECT_EQ(run_tilevit(squeezed + " --batch 3").exit_code, 0);
  EXPECT_EQ(run_tilevit(squeezed + " --batch 4 --layers 1").exit_code, 0);
  expect_error(squeezed + " --batch 4 --json", 3, {"does not fit"});
}

// 9. reference --package gives the device's numerics exactly (the package's splits).
TEST_F(NewUserCli, ReferenceOfAPackageIsTheDevice) {
  const std::string p = package();
  const auto run = run_tilevit("run --package " + p + " --inferences 1 --no-reference --out " + path("o") +
                               " --save-embeddings " + path("device.npy"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto ref = run_tilevit("reference --package " + p + " --json --save-device " + path("reference.npy"));
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  EXPECT_EQ(read_all(path("device.npy")), read_all(path("reference.npy")));
  EXPECT_NE(nlohmann::json::parse(ref.out)["splits"].get<std::string>().find(p), std::string::npos);
  expect_error("reference --package " + p + " --layers 1", 2, {"--layers"});
}

// 10. Values are validated with a clear message; binary content is never echoed.
TEST_F(NewUserCli, ValuesAreValidated) {
  for (const char* v : {"-1", "18446744073709551616", "''"}) expect_error("reference --preset small --seed " + std::string(v), 2, {"--seed"});
  for (const char* v : {"nan", "2", "-5", "0", "''"}) expect_error(small_run(path("o")) + " --min-cosine " + v, 2, {"--min-cosine"});
  for (const char* v : {"nan", "inf", "-1"})
    expect_error(small_run(path("o")) + " --device-lock " + path("l") + " --lock-timeout " + v, 2, {"--lock-timeout"});
  expect_error("compile " + small() + " --layers ''", 2, {"--layers", "empty"});
  expect_error("compile " + small() + " --optimization-steps 1 --search-seconds nan", 2, {"--search-seconds", "finite"});
  std::ofstream(path("image.machine"), std::ios::binary) << std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18);
  const auto r = run_tilevit("machine --machine " + path("image.machine"));
  EXPECT_EQ(r.exit_code, 3);
  for (unsigned char c : last_line(r.err)) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(c) << " echoed";
}

// 11. The checkpoint's own layer count is used; asking for more fails before work.
TEST_F(NewUserCli, WeightsDecideTheLayerCount) {
  const std::string w = path("one.safetensors");
  ASSERT_EQ(run_tilevit("export-weights " + w + " --preset small --layers 1").exit_code, 0);
  const auto r = run_tilevit(small_run(path("o")) + " --weights " + w + " --no-profile");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run_json(path("o"))["layers"], 1);
  EXPECT_NE(r.out.find("1 layer,"), std::string::npos) << r.out;  // 12: no "1 layers"
  expect_error(small_run(path("o")) + " --weights " + w + " --layers 2", 3, {w, "holds 1 encoder layer"});
}

// 12. Cosmetics: calls counted from 1, plain text, one hash length, every error prefixed;
// run.json records threshold, threads, seed and numerics.
TEST_F(NewUserCli, ReportsReadWell) {
  const auto r = run_tilevit("run " + small() + " --inferences 2 --out " + path("o") + " --seed 7 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("call 1 of 2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call 2 of 2:"), std::string::npos) << r.out;
  const auto j = run_json(path("o"));
  EXPECT_EQ(j["min_cosine_threshold"], 0.99);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["seed"], 7);
  EXPECT_NE(j["numerics"].get<std::string>().find("fp8(-4)"), std::string::npos);
  const auto c = run_tilevit("compile " + small());
  EXPECT_EQ(c.out.find('"'), std::string::npos) << c.out;  // text, not flattened JSON
  EXPECT_NE(c.out.find("estimated_cycles: "), std::string::npos);
  expect_error("compile --no-such-flag", 2, {"--no-such-flag"});
  expect_error("", 2, {"subcommand"});
  for (const char* cmd : {"", "run", "compile", "reference", "export-weights", "verify", "inspect", "machine",
                          "cost-check", "memory-map", "profile", "profile query", "profile diff", "profile render"})
    EXPECT_NE(run_tilevit(std::string(cmd) + " --help").out.find("Examples:\n  tilevit "), std::string::npos) << cmd;
}

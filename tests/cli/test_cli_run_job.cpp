// One run job for one chip and several (issue 30, part 3) and issue #34's run-job items,
// one test per item, named after the behaviour: the small model on test16 (one chip) and
// test16x2 (two chips, a layer each), siglip2-tiny for pipeline packages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_runner.hpp"

namespace tilevit::test_support {
namespace {
namespace fs = std::filesystem;

class RunJobCli : public CliTest {
 protected:
  const std::string one_ = "--preset small --machine test16 --inferences 1";
  const std::string two_ = "--preset small --machine test16x2 --inferences 1 --no-profile";
  static void expect_error(const std::string& args, int code, std::initializer_list<std::string> needles) {
    expect_error_line(args, code, needles);
  }
  // The random small model as a checkpoint, with a NaN written into one tensor if asked.
  std::string checkpoint(bool nan) {
    const std::string file = path(nan ? "nan.safetensors" : "small.safetensors");
    EXPECT_EQ(run_tilevit("export-weights " + file + " --preset small").exit_code, 0);
    if (!nan) return file;
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    std::uint64_t header_bytes = 0;
    f.read(reinterpret_cast<char*>(&header_bytes), 8);
    std::string header(header_bytes, '\0');
    f.read(header.data(), std::streamsize(header_bytes));
    const auto j = nlohmann::json::parse(header);
    for (const auto& [name, t] : j.items()) {
      if (name == "__metadata__" || t["dtype"] != "F32") continue;
      const float value = std::numeric_limits<float>::quiet_NaN();
      f.seekp(std::streamoff(8 + header_bytes + t["data_offsets"][0].get<std::uint64_t>()));
      f.write(reinterpret_cast<const char*>(&value), sizeof value);
      break;
    }
    return file;
  }
};

nlohmann::json run_json(const std::string& dir) { return nlohmann::json::parse(read_all(dir + "/run.json")); }

// The files of a directory, the lock file aside.
std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != ".tilevit.lock") names.insert(e.path().filename().string());
  return names;
}

// Every file of `dir` is an output its run.json lists, at the size it lists.
void expect_one_run(const std::string& dir) {
  const auto j = run_json(dir);
  std::set<std::string> listed = {"run.json"};
  for (const auto& [name, f] : j["outputs"].items()) {
    listed.insert(name);
    EXPECT_EQ(f["bytes"].get<std::uint64_t>(), fs::file_size(dir + "/" + name)) << name;
  }
  EXPECT_EQ(files_in(dir), listed);
}

// Issue 30: `run --machine test16x2 --preset small --no-profile` works, through the run
// job one chip uses; run.json has the same shape for both.
TEST_F(RunJobCli, PipelineRunAcceptsNoProfileAndReportsLikeOneChip) {
  const auto r = run_tilevit("run " + two_ + " --time-reference --out " + path("two"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host speed: call median"), std::string::npos) << r.out;
  const auto two = run_json(path("two"));
  EXPECT_EQ(two["pipeline"]["stages"].size(), 2u);
  EXPECT_EQ(two["passed"], true);
  EXPECT_EQ(two["cycles_match_model"], true);
  const auto one = run_tilevit("run " + one_ + " --no-profile --out " + path("one"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto j = run_json(path("one"));
  for (const char* key : {"calls", "cosines", "min_cosine", "passed", "checked", "verdict", "outputs", "package_sha256",
                          "host_ms_per_call", "weight_upload_seconds", "numerics", "images", "weights", "threads"}) {
    EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(two.contains(key)) << key;
  }
  for (const char* key : {"images", "device_cycles", "host_ms", "finite", "cosines"}) {
    EXPECT_TRUE(j["calls"][0].contains(key)) << key;
    EXPECT_TRUE(two["calls"][0].contains(key)) << key;
  }
}

// Issue 32, item 4: a multi-chip run writes one profile of the whole system (a group of
// rows per chip, the link transfers as rows with their bytes and cycles, every
// micro-batch), model.html, trace.json with a process per chip and the memory files per
// stage; every profile flag works there, and the link cycles are the package's.
TEST_F(RunJobCli, SeveralChipsWriteOneSystemProfile) {
  const std::string out = path("x2");
  const CliResult r = run_tilevit("run --preset small --machine test16x2 --micro-batches 2 --inferences 1 --no-reference "
                                  "--profile-granularity kernel --profile-iterations all --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"profile.tvprof", "model.html", "trace.json", "memory-stage0.json", "memory-stage0.png",
                        "memory-stage0.html", "memory-stage1.json", "memory-stage1.html"})
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  const auto run = nlohmann::json::parse(read_all(out + "/run.json"));
  const auto q = nlohmann::json::parse(
      run_tilevit("profile query " + out + "/profile.tvprof --group-by phase --limit 100000 --json").out);
  EXPECT_EQ(q["span_cycles"], run["calls"][0]["device_cycles"]);
  EXPECT_EQ(q["tiles"].get<std::uint32_t>(), 2 * 16 + 1);  // two chips' tiles and one link row
  std::uint64_t link_cycles = 0, link_words = 0, link_rows = 0;
  for (const auto& row : q["rows"])
    if (row["key"].get<std::string>().rfind("link chip 0 -> 1, micro-batch ", 0) == 0)
      link_cycles += row["cycles"].get<std::uint64_t>(), link_words += row["words"].get<std::uint64_t>(), ++link_rows;
  EXPECT_EQ(link_rows, 2u);  // one per micro-batch
  EXPECT_EQ(link_cycles, 2 * run["pipeline"]["links"][0]["cycles"].get<std::uint64_t>());
  EXPECT_EQ(link_words * 4, 2 * run["pipeline"]["links"][0]["bytes"].get<std::uint64_t>());
  // trace.json: a process per chip and one for the links.
  std::set<std::string> processes;
  const auto trace = nlohmann::json::parse(read_all(out + "/trace.json"));
  for (const auto& e : trace["traceEvents"])
    if (e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>().substr(0, 6));
  EXPECT_EQ(processes, (std::set<std::string>{"chip 0", "chip 1", "links "}));
  // The same queries, diff and compare as one chip; memory files as `memory-map --stage N`.
  EXPECT_EQ(run_tilevit("profile diff " + out + "/profile.tvprof " + out + "/profile.tvprof").exit_code, 0);
  EXPECT_EQ(run_tilevit("profile compare " + out + "/profile.tvprof " + out + "/profile.tvprof -o " + out + "/c.html").exit_code, 0);
  ASSERT_EQ(run_tilevit("memory-map " + out + "/model.tvpkg --stage 1 --out " + out + "/m1").exit_code, 0);
  EXPECT_EQ(read_all(out + "/m1/memory.json"), read_all(out + "/memory-stage1.json"));
  // compile --profile on several chips makes a profiled pipeline package; run profiles it.
  const std::string pkg = path("x2p.tvpkg");
  ASSERT_EQ(run_tilevit("compile --preset small --machine test16x2 --profile --profile-granularity kernel --package " + pkg)
                .exit_code, 0);
  ASSERT_EQ(run_tilevit("run --package " + pkg + " --inferences 1 --no-reference --out " + path("x2p")).exit_code, 0);
  EXPECT_TRUE(fs::exists(path("x2p") + "/profile.tvprof"));
  // A pipeline package keeps its profiling options: other flags are refused (exit 2).
  expect_error("run --package " + out + "/model.tvpkg --profile-granularity phase --out " + path("o2"), 2,
               {"--profile-granularity", "cannot change it"});
}

// Issue 34, item 1: a pipeline package refuses contradicting flags as a one-chip package does.
TEST_F(RunJobCli, PipelinePackageRefusesContradictingFlags) {
  const std::string pipe = path("pipe.tvpkg");
  ASSERT_EQ(run_tilevit("compile --preset siglip2-tiny --machine test16x2 --package " + pipe).exit_code, 0);
  for (const std::string flag : {"--preset so400m", "--batch 2", "--layers 2", "--fp8-scale -3", "--machine c600x8",
                                 "--machine test16", "--exchange-stream-words 512"})
    expect_error("run --package " + pipe + " --inferences 1 --out " + path("o") + " " + flag, 2,
                 {flag.substr(0, flag.find(' ')), "built with"});
  const auto ok = run_tilevit("run --package " + pipe + " --preset siglip2-tiny --machine test16x2 --inferences 1 --out " +
                              path("o"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// Issue 34, item 3: --no-reference is unchecked, never PASS; --min-cosine with nothing to
// compare is refused.
TEST_F(RunJobCli, NoReferenceIsUncheckedNeverPass) {
  for (const std::string& model : {one_ + " --layers 1", two_}) {
    const std::string out = path("nr");
    const auto r = run_tilevit("run " + model + " --no-reference --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("UNCHECKED"), std::string::npos) << r.out;
    const auto j = run_json(out);
    EXPECT_TRUE(j["passed"].is_null());
    EXPECT_EQ(j["checked"], false);
    EXPECT_EQ(j["verdict"], "unchecked");
  }
  expect_error("run " + one_ + " --no-reference --min-cosine 0.999999 --out " + path("o"), 2,
               {"--min-cosine", "--no-reference"});
  expect_error("run " + two_ + " --no-reference --min-cosine 0.5 --out " + path("o"), 2, {"--min-cosine"});
  expect_error("reference --preset small --fp32-only --min-cosine 0.5", 2, {"--min-cosine", "--fp32-only"});
}

// Issue 34, item 4: one image per batch entry; --batch 1 with two images is refused.
TEST_F(RunJobCli, BatchOneWithTwoImagesIsRefused) {
  expect_error("run " + one_ + " --batch 1 --image " + path("a.png") + " " + path("b.jpg") + " --out " + path("o"), 2,
               {"--batch 1", "2 --image"});
  expect_error("reference --preset small --batch 1 --image " + path("a.png") + " " + path("b.jpg"), 2, {"--batch 1"});
}

// Issue 34, item 6: --out never mixes runs. A one-chip run, a pipeline run, then a
// failing run into one directory: every file present belongs to the last run that wrote
// it; a failed run leaves no file it wrote and no directory it created.
TEST_F(RunJobCli, OutNeverMixesRuns) {
  const std::string out = path("out");
  ASSERT_EQ(run_tilevit("run " + one_ + " --out " + out).exit_code, 0);
  EXPECT_TRUE(fs::exists(out + "/model.html"));
  expect_one_run(out);
  const auto two = run_tilevit("run " + two_ + " --out " + out);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  for (const char* stale : {"memory.json", "memory.png", "memory.html"})  // a pipeline's: memory-stage<N>.*
    EXPECT_FALSE(fs::exists(out + "/" + stale)) << stale;
  EXPECT_TRUE(fs::exists(out + "/memory-stage1.json"));
  expect_one_run(out);
  const std::string nan = checkpoint(true);
  expect_error("run " + one_ + " --weights " + nan + " --out " + out, 3, {"NaN"});
  EXPECT_TRUE(files_in(out).empty());  // the pipeline's outputs were removed first, the failed run's own after
  expect_error("run " + two_ + " --weights " + nan + " --out " + path("new/dir"), 3, {"NaN"});
  EXPECT_FALSE(fs::exists(path("new/dir")));
  // A --package kept in the directory is an input, not an earlier run's output.
  ASSERT_EQ(run_tilevit("run " + one_ + " --out " + out).exit_code, 0);
  const auto again = run_tilevit("run --package " + out + "/model.tvpkg --inferences 1 --out " + out);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(fs::exists(out + "/model.tvpkg"));
}

// Issue 34, item 7 and 15: under mpirun without --mpi, a one-chip run and compile are
// refused (exit 2), and a --json error every rank meets is printed by rank 0 only.
TEST_F(RunJobCli, UnderMpirunOneChipRunAndCompileAreRefused) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  const auto run = run_tilevit("run " + one_ + " --json --out " + path("o"));
  const auto compile = run_tilevit("compile --preset small --machine test16 --json --package " + path("p.tvpkg"));
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  const auto compile1 = run_tilevit("compile --preset small --machine test16 --json --package " + path("p.tvpkg"));
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  for (const auto* r : {&run, &compile, &compile1}) {
    EXPECT_EQ(r->exit_code, 2) << r->err;
    EXPECT_NE(last_line(r->err).find("mpirun -np 2"), std::string::npos) << r->err;
    EXPECT_EQ(r->err_lines(), 1) << r->err;
  }
  EXPECT_NE(last_line(run.err).find("--mpi"), std::string::npos) << run.err;
  EXPECT_EQ(nlohmann::json::parse(compile.out)["exit_code"], 2);
  EXPECT_EQ(compile1.out, "");  // rank 1: the error once, on rank 0's stdout
  EXPECT_FALSE(fs::exists(path("o")));
  EXPECT_FALSE(fs::exists(path("p.tvpkg")));
}

// Issue 34, item 9: a checkpoint's shapes and values are checked before the compile, and
// a checkpoint of another preset's shapes names it.
TEST_F(RunJobCli, CheckpointIsCheckedBeforeTheCompile) {
  const std::string small = checkpoint(false);
  const auto r = run_tilevit("run --machine test16 --inferences 1 --weights " + small + " --out " + path("o"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(last_line(r.err).find("--preset small"), std::string::npos) << last_line(r.err);
  EXPECT_EQ(r.err.find("compiling"), std::string::npos) << r.err;
  const std::string nan = checkpoint(true);
  for (const std::string& model : {one_, two_}) {
    const auto bad = run_tilevit("run " + model + " --weights " + nan + " --out " + path("o"));
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_NE(last_line(bad.err).find("NaN"), std::string::npos) << last_line(bad.err);
    EXPECT_EQ(bad.err.find("compiling"), std::string::npos) << bad.err;
  }
}

// Issue 34, item 15: a pipeline FAIL says the min cosine and the threshold, as one chip does.
TEST_F(RunJobCli, PipelineFailPrintsMinCosineAndThreshold) {
  const auto r = run_tilevit("run " + two_ + " --min-cosine 1 --out " + path("o"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("min cosine "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(threshold 1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tilevit::test_support

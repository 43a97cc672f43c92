// The run's output directory: an earlier run's outputs removed when it opens, inputs
// kept, a run that does not commit leaves nothing it wrote (nor a directory it created).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "job/output_directory.hpp"
#include "support/error.hpp"

namespace tilevit::job {
namespace {
namespace fs = std::filesystem;

class OutputDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tilevit_outdir_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string at(const std::string& name) const { return (root_ / name).string(); }
  fs::path root_;
};

TEST_F(OutputDirectoryTest, OpeningRemovesAnEarlierRunsOutputsButNotInputsOrOtherFiles) {
  const std::string dir = at("out");
  fs::create_directories(dir);
  for (const char* name : {"run.json", "model.html", "memory.png", "model.tvpkg", "notes.txt"})
    std::ofstream(dir + "/" + name) << "old";
  {
    OutputDirectory out(dir, {dir + "/model.tvpkg"});
    out.commit();
  }
  EXPECT_FALSE(fs::exists(dir + "/run.json"));
  EXPECT_FALSE(fs::exists(dir + "/model.html"));
  EXPECT_FALSE(fs::exists(dir + "/memory.png"));
  EXPECT_TRUE(fs::exists(dir + "/model.tvpkg"));  // an input of the run
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));    // not a run's output
}

TEST_F(OutputDirectoryTest, ARunThatDoesNotCommitLeavesNothingItWrote) {
  const std::string dir = at("existing");
  fs::create_directories(dir);
  {
    OutputDirectory out(dir);
    std::ofstream(out.output("embeddings.npy")) << "new";
  }
  EXPECT_FALSE(fs::exists(dir + "/embeddings.npy"));
  EXPECT_TRUE(fs::is_directory(dir));  // not created by the run
  const std::string fresh = at("fresh/nested");
  {
    OutputDirectory out(fresh);
    std::ofstream(out.output("run.json")) << "{}";
  }
  EXPECT_FALSE(fs::exists(at("fresh")));  // nor the directories it created
  {
    OutputDirectory out(fresh);
    std::ofstream(out.output("run.json")) << "{}";
    out.commit();
  }
  EXPECT_TRUE(fs::exists(fresh + "/run.json"));
}

TEST_F(OutputDirectoryTest, OneRunAtATime) {
  const std::string dir = at("locked");
  OutputDirectory first(dir);
  try {
    OutputDirectory second(dir);
    FAIL() << "a second run took the directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitResource);
    EXPECT_NE(std::string(e.what()).find("another tilevit run"), std::string::npos) << e.what();
  }
  first.commit();
}

}  // namespace
}  // namespace tilevit::job

// A pipeline's memory files per stage are outputs too (removed by the next run); other
// names that look alike are not.
TEST(OutputDirectory, StageMemoryFilesAreOutputs) {
  for (const char* name : {"memory-stage0.json", "memory-stage12.png", "memory-stage1.html"})
    EXPECT_TRUE(tilevit::job::is_stage_memory_output(name)) << name;
  for (const char* name : {"memory-stage.json", "memory-stage1.txt", "memory-stage1.json.bak", "xmemory-stage1.json"})
    EXPECT_FALSE(tilevit::job::is_stage_memory_output(name)) << name;
}

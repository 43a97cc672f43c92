#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace fs = std::filesystem;
using namespace tilevit;

TEST(AtomicFile, WritesAndReplaces) {
  const std::string path = ::testing::TempDir() + "/atomic_a.txt";
  write_text_atomically(path, "first");
  write_text_atomically(path, "second");
  EXPECT_EQ(read_text_file(path, 100), "second");
}

TEST(AtomicFile, FailureLeavesNoFileBehind) {
  const std::string dir = ::testing::TempDir() + "/atomic_fail";
  fs::create_directories(dir);
  const std::string path = dir + "/out.bin";
  EXPECT_THROW(write_file_atomically(path, [](std::ostream&) { throw Error("boom"); }), Error);
  EXPECT_FALSE(fs::exists(path));
  for (auto& entry : fs::directory_iterator(dir)) ADD_FAILURE() << "left behind: " << entry.path();
}

TEST(AtomicFile, UnwritableDirectoryNamesPath) {
  try {
    write_text_atomically("/nonexistent-dir/x.txt", "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.txt"), std::string::npos);
  }
}

TEST(AtomicFile, ReadRefusesOversizedFile) {
  const std::string path = ::testing::TempDir() + "/atomic_big.txt";
  write_text_atomically(path, std::string(1000, 'x'));
  EXPECT_THROW(read_text_file(path, 999), Error);
  EXPECT_EQ(read_text_file(path, 1000).size(), 1000u);
}

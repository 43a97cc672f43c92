#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace fs = std::filesystem;
using namespace tilevit;

static std::string read_all_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

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

// Issue #22, item 1: what the user named is written, never replaced by a regular file.
TEST(AtomicFile, DeviceIsWrittenInPlace) {
  write_text_atomically("/dev/null", "discarded");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicFile, FifoIsWrittenInPlace) {
  const std::string dir = ::testing::TempDir() + "/atomic_fifo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_all_of(fifo); });
  write_text_atomically(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(AtomicFile, SymlinkIsFollowedAndKept) {
  const std::string dir = ::testing::TempDir() + "/atomic_link";
  fs::remove_all(dir);
  fs::create_directories(dir + "/real");
  fs::create_symlink("real/target.txt", dir + "/link.txt");  // dangling until written
  write_text_atomically(dir + "/link.txt", "one");
  write_text_atomically(dir + "/link.txt", "two");
  EXPECT_TRUE(fs::is_symlink(dir + "/link.txt"));
  EXPECT_EQ(read_text_file(dir + "/real/target.txt", 100), "two");
}

// A dead process's pid: a child that has exited and been reaped.
static pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// Issue #22, item 5: temporaries never outlive their writer.
TEST(AtomicFile, StaleTemporariesAreSwept) {
  const std::string dir = ::testing::TempDir() + "/atomic_sweep";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string stale = dir + "/model.tvpkg.tmp." + std::to_string(dead_pid());
  const std::string live = dir + "/other.tmp." + std::to_string(::getppid());  // a running process
  write_text_atomically(stale, "left by a killed run");
  write_text_atomically(live, "being written");
  write_text_atomically(dir + "/run.json", "{}");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
}

TEST(AtomicFile, SigtermRemovesTheTemporary) {
  const std::string dir = ::testing::TempDir() + "/atomic_signal";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const pid_t child = ::fork();
  if (child == 0) {
    write_file_atomically(dir + "/big.bin", [](std::ostream& out) {
      out << "partial";
      out.flush();
      ::raise(SIGTERM);
    });
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(AtomicFile, WritabilityIsCheckedUpFront) {
  EXPECT_THROW(check_output_writable("/nonexistent-dir/x.npy"), Error);
  EXPECT_THROW(check_output_writable(::testing::TempDir()), Error);  // a directory
  EXPECT_NO_THROW(check_output_writable(::testing::TempDir() + "/new.npy"));
  EXPECT_NO_THROW(check_output_writable("/dev/null"));
  EXPECT_NO_THROW(check_output_writable("-"));
}

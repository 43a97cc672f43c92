// Two processes with the same --device-lock never use the device at the same time.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "cli_runner.hpp"

using namespace tilevit;
using test_support::last_line;
using test_support::run_tilevit;

TEST(DeviceLock, SecondProcessWaitsThenFailsClearly) {
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_lock_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string lock = (dir / "device.lock").string();
  const std::string machine = std::string(TILEVIT_SOURCE_DIR) + "/src/target/machines/test16.machine";
  const std::string run = "run --preset small --inferences 1 --machine " + machine + " --out " + (dir / "out").string() +
                          " --device-lock " + lock + " --lock-timeout 0.5";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // another user holds the device
  const auto blocked = run_tilevit(run);
  EXPECT_EQ(blocked.exit_code, 4) << blocked.err;
  EXPECT_NE(last_line(blocked.err).find("device lock held by another process"), std::string::npos) << blocked.err;
  ::close(fd);  // released
  const auto ok = run_tilevit(run);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  std::filesystem::remove_all(dir);
}

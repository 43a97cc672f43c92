#pragma once
// The error a machine description gives, for the tests of bad descriptions.
#include <gtest/gtest.h>

#include <string>

#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::target {

// Parses `text` as "bad.machine" and returns the error message ("" if it parsed); the
// error must be one line with exit code 3.
inline std::string parse_error(const std::string& text) {
  try {
    parse_machine(text, "bad.machine");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    return message;
  }
  return "";
}

}  // namespace tilevit::target

#pragma once
// A sweep directory in a fresh temporary folder, from a spec text (the small model on
// test16 unless the text says otherwise).
#include <unistd.h>

#include <filesystem>
#include <string>

#include "sweep/sweep_dir.hpp"

namespace tilevit::sweep::test {

inline std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tilevit_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

// 2 batches x 2 SRAM sizes (160 KiB cannot hold the small model) x 2 clocks = 8 points.
inline const char* const kSmallSweep =
    R"({"tilevit_sweep": 1, "machine": "test16",
        "axes": {"preset": ["small"], "batch": [1, 2], "sram_size": [163840, 638976],
                 "clock_hz": [1000000000, 2000000000]}})";

inline SweepDirectory small_sweep(const std::string& dir, const std::string& text = kSmallSweep) {
  return SweepDirectory::create(dir, parse_sweep_spec(text, "spec.json", ""));
}

}  // namespace tilevit::sweep::test

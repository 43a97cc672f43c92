#pragma once
// The profiling flags shared by `compile` and `run`: whether the build records a profile,
// at which granularity, and how many loop iterations in detail.
#include <CLI/CLI.hpp>

#include <string>

#include "compiler/profiling.hpp"
#include "support/error.hpp"

namespace tilevit::cli {

struct ProfileFlags {
  bool enabled = true;
  std::string granularity = "phase";
  std::string iterations = "1";

  // `on_by_default`: run profiles unless --no-profile; compile only with --profile.
  void add_to(CLI::App& app, bool on_by_default) {
    enabled = on_by_default;
    on_by_default_ = on_by_default;
    if (on_by_default)
      flags_[0] = app.add_flag("!--no-profile", enabled, "unprofiled build: no profiling buffers, no profile written");
    else
      flags_[0] = app.add_flag("--profile", enabled, "profiling build: reserve the tiles' profiling buffers");
    flags_[1] = app.add_option("--profile-granularity", granularity, "graph, phase or kernel")->capture_default_str();
    flags_[2] = app.add_option("--profile-iterations", iterations, "loop iterations recorded in detail: a number or 'all'")
                    ->capture_default_str();
  }

  // --profile-granularity or --profile-iterations without profiling would be dropped: refuse.
  void check_consistent() const {
    if (enabled || (flags_[1]->count() == 0 && flags_[2]->count() == 0)) return;
    const std::string flag = flags_[1]->count() ? "--profile-granularity" : "--profile-iterations";
    throw Error(flag + " needs a profiling build (" + (on_by_default_ ? "drop --no-profile)" : "add --profile)"),
                kExitUsage);
  }

  // The first of --profile-granularity, --profile-iterations given, or "" (--no-profile
  // and --profile say only whether to profile).
  std::string detail_flag() const {
    if (flags_[1] != nullptr && flags_[1]->count() > 0) return "--profile-granularity";
    if (flags_[2] != nullptr && flags_[2]->count() > 0) return "--profile-iterations";
    return {};
  }

  // Whether any profiling flag was given on the command line.
  bool given() const {
    for (const CLI::Option* o : flags_)
      if (o != nullptr && o->count() > 0) return true;
    return false;
  }

  compiler::ProfilingOptions options() const {
    compiler::ProfilingOptions o;
    o.enabled = enabled;
    o.detail.granularity = compiler::granularity_from_string(granularity);
    if (iterations == "all") {
      o.detail.iterations_in_detail = UINT32_MAX;
    } else {
      std::size_t used = 0;
      unsigned long v = 0;
      try {
        v = std::stoul(iterations, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != iterations.size() || iterations.empty() || v > 1000000)
        throw Error("--profile-iterations " + iterations + ": expected a number or 'all'", kExitUsage);
      o.detail.iterations_in_detail = static_cast<std::uint32_t>(v);
    }
    return o;
  }

 private:
  CLI::Option* flags_[3] = {};
  bool on_by_default_ = true;
};

}  // namespace tilevit::cli

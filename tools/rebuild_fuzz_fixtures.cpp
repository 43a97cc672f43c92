// Rebuilds the fuzz reproducers of tests/fixtures/fuzz/ (packages and profiles) in the
// formats this build writes, so that each still reaches the check its finding added
// (docs/FUZZING.md, "The reproducers"). The originals were byte-level mutations of
// packages whose formats have changed since; here each is the same defect applied to
// the small model on test16 through the compiler's own structures or the section's
// text, then encoded and hashed by the current writers. After a format change:
//   cmake --build build --target rebuild_fuzz_fixtures && build/tools/rebuild_fuzz_fixtures tests/fixtures/fuzz
// Usage: rebuild_fuzz_fixtures DIR (writes the files below into DIR).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "package/container.hpp"
#include "package/program_codec.hpp"
#include "profile/profile.hpp"
#include "profile/profile_file.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"

using namespace tilevit;

namespace {

compiler::CompiledModel small_model() {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = 2;
  return compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(),
                                 {});
}

std::vector<std::byte> package_bytes(const compiler::Executable& e) { return package::encode_package(e).bytes(); }

// `bytes` with section `name`'s text passed through `edit`, every hash recomputed.
std::vector<std::byte> edit_section(std::vector<std::byte> bytes, const std::string& name,
                                    const std::function<void(std::string&)>& edit) {
  return package::with_sections_rewritten(std::move(bytes), [&](const std::string& section, std::string& text) {
    if (section == name) edit(text);
  });
}

// Replaces the first `from` in `text` by `to`; a text without it is a bug of this tool.
std::function<void(std::string&)> replace(const std::string& from, const std::string& to) {
  return [from, to](std::string& text) {
    const auto at = text.find(from);
    if (at == std::string::npos)
      throw Error("rebuild_fuzz_fixtures: \"" + from + "\" is not in the section", kExitInternal);
    text.replace(at, from.size(), to);
  };
}

// The value of the first "key = value" line (machine text) set to `value`.
void set_value(std::string& text, const std::string& key, const std::string& value) {
  const auto at = text.find("\n" + key + " = ");
  if (at == std::string::npos) throw Error("rebuild_fuzz_fixtures: no key " + key + " in the section", kExitInternal);
  const auto from = at + key.size() + 4, end = text.find('\n', from);
  text.replace(from, end - from, value);
}

// The small model's profile with the header's JSON number `key` replaced by `value`.
std::vector<std::byte> profile_with(const compiler::CompiledModel& m, const std::string& key,
                                    const std::string& value) {
  const auto bytes = profile::encode_profile(profile::build_profile(target::test16(), m.executable.program, {}));
  return edit_section(bytes, "profile", [&](std::string& t) {
    const auto at = t.find("\"" + key + "\": ");
    if (at == std::string::npos) throw Error("rebuild_fuzz_fixtures: no " + key + " in the profile", kExitInternal);
    const auto end = t.find_first_of(",}", at);
    t.replace(at, end - at, "\"" + key + "\": " + value);
  });
}

compiler::KernelCall& last_call(compiler::CompiledProgram& p) {
  for (auto s = p.steps.rbegin(); s != p.steps.rend(); ++s)
    if (!s->compute.empty()) return s->compute.back();
  throw Error("rebuild_fuzz_fixtures: no kernel call in the small model", kExitInternal);
}

compiler::Superstep& first_step_with_exchange(compiler::CompiledProgram& p) {
  const auto it = std::find_if(p.steps.begin(), p.steps.end(), [](const auto& s) { return !s.exchange.empty(); });
  if (it == p.steps.end()) throw Error("rebuild_fuzz_fixtures: no exchange in the small model", kExitInternal);
  return *it;
}

compiler::KernelCall& first_call_of(compiler::CompiledProgram& p, compiler::KernelKind kind) {
  for (auto& s : p.steps)
    for (auto& c : s.compute)
      if (c.kind == kind) return c;
  throw Error("rebuild_fuzz_fixtures: no such kernel in the small model", kExitInternal);
}

// A package whose program is the small model's after `edit`.
std::vector<std::byte> with_program(const compiler::CompiledModel& m,
                                    const std::function<void(compiler::CompiledProgram&)>& edit) {
  compiler::Executable e = m.executable;
  edit(e.program);
  return package_bytes(e);
}

struct Fixture {
  const char* name;
  std::function<std::vector<std::byte>(const compiler::CompiledModel&)> build;
};

const std::vector<Fixture>& fixtures() {
  using compiler::CompiledModel;
  using compiler::CompiledProgram;
  static const std::vector<Fixture> all = {
      // Model section: a JSON number that does not fit its field; heads x head_dim wrapping.
      {"pkg_float_int.tvpkg",
       [](const CompiledModel& m) {
         return edit_section(package_bytes(m.executable), "model", replace("\"layers\": 2", "\"layers\": 1e+300"));
       }},
      {"pkg_heads_overflow.tvpkg",
       [](const CompiledModel& m) {
         return edit_section(package_bytes(m.executable), "model", replace("\"heads\": 2", "\"heads\": 1073741824"));
       }},
      {"pkg_heads_wrap.tvpkg",
       [](const CompiledModel& m) {
         return edit_section(package_bytes(m.executable), "model", replace("\"heads\": 2", "\"heads\": 536870914"));
       }},
      // Machine section: element_bytes x unit_elements wrapping to 0 (a division by zero).
      {"pkg_machine_divzero.tvpkg",
       [](const CompiledModel& m) {
         return edit_section(package_bytes(m.executable), "machine", [](std::string& t) {
           set_value(t, "element_bytes", "0x80000000");
           set_value(t, "unit_elements", "2");
         });
       }},
      // Program: an exchange phase declaring 2^32-1 waves (a per-wave table of 96 GiB).
      {"pkg_huge_wave.tvpkg",
       [](const CompiledModel& m) {
         return with_program(m, [](CompiledProgram& p) { first_step_with_exchange(p).waves = UINT32_MAX; });
       }},
      // Program: tiles the machine does not have (out-of-bounds tile tables).
      {"pkg_kernel_tile.tvpkg",
       [](const CompiledModel& m) {
         return with_program(m, [](CompiledProgram& p) { p.steps.front().compute.front().tile = 1000; });
       }},
      {"min_package_P1_kernel_tile.tvpkg",
       [](const CompiledModel& m) { return with_program(m, [](CompiledProgram& p) { last_call(p).tile = 16; }); }},
      {"pkg_xfer_tile.tvpkg",
       [](const CompiledModel& m) {
         return with_program(
             m, [](CompiledProgram& p) { first_step_with_exchange(p).exchange.front().source.tile = 1000; });
       }},
      {"min_package_P1_src_tile.tvpkg",
       [](const CompiledModel& m) {
         return with_program(m,
                             [](CompiledProgram& p) { first_step_with_exchange(p).exchange.back().source.tile = 16; });
       }},
      {"min_package_P1_dst_tile.tvpkg",
       [](const CompiledModel& m) {
         return with_program(m, [](CompiledProgram& p) {
           first_step_with_exchange(p).exchange.front().destinations.front().tile = 16;
         });
       }},
      // Program: GEMM dims of 2^32-1 (operand sizes overflowing).
      {"pkg_gemm_dims.tvpkg",
       [](const CompiledModel& m) {
         return with_program(m, [](CompiledProgram& p) {
           for (auto& d : first_call_of(p, compiler::KernelKind::gemm_fp8).dims) d = UINT32_MAX;
         });
       }},
      // Program: an FP8 cast with a scale far outside the format (a shift by 2^31).
      {"min_package_P2_cast.tvpkg",
       [](const CompiledModel& m) {
         return with_program(
             m, [](CompiledProgram& p) { first_call_of(p, compiler::KernelKind::cast_fp8).scale = 0x7ffffff8; });
       }},
      // Program: 16,000 allocations at one address (128 million overlapping pairs).
      {"pkg_overlap_16000.tvpkg",
       [](const CompiledModel& m) {
         return with_program(
             m, [](CompiledProgram& p) { p.allocations.insert(p.allocations.end(), 16000, p.allocations.front()); });
       }},
      // Profile header numbers that do not fit their fields.
      {"prof_float_u32.tvprof", [](const CompiledModel& m) { return profile_with(m, "flop_per_cycle_fp8", "1e+300"); }},
      {"min_profile_U1.tvprof",
       [](const CompiledModel& m) { return profile_with(m, "iterations_in_detail", "19223372036854775807"); }},
      // Profile meta: a label that is not UTF-8 (0xD7 with no continuation byte), which
      // `profile render --format trace` wrote into its JSON (fuzz_profile, 2026-12-07).
      {"prof_label_utf8.tvprof",
       [](const CompiledModel& m) {
         auto p = profile::build_profile(target::test16(), m.executable.program, {});
         p.meta.back().operation += "\xD7x";
         return profile::encode_profile(p);
       }},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: rebuild_fuzz_fixtures DIR\n";
    return kExitUsage;
  }
  try {
    const compiler::CompiledModel m = small_model();
    for (const Fixture& f : fixtures()) {
      const auto bytes = f.build(m);
      const std::string path = (std::filesystem::path(argv[1]) / f.name).string();
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
      std::cout << path << ": " << bytes.size() << " B\n";
    }
  } catch (const Error& e) {
    std::cerr << "rebuild_fuzz_fixtures: " << e.what() << "\n";
    return e.exit_code();
  }
  return kExitOk;
}

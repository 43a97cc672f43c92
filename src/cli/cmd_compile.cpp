// tilevit compile: the model as a static program for every tile of the machine.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/calibration_report.hpp"
#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/pipeline_commands.hpp"
#include "cli/plan_search_flags.hpp"
#include "cli/profile_options.hpp"
#include "compiler/calibration_coverage.hpp"
#include "compiler/compile.hpp"
#include "compiler/plan_file.hpp"
#include "compiler/program_dump.hpp"
#include "package/program_codec.hpp"
#include <algorithm>
#include "support/atomic_file.hpp"
#include "support/digits.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"
#include "target/model_validation.hpp"

namespace tilevit::cli {
namespace {

struct CompileCommand {
  ModelOptions model;
  ProfileFlags profiling;
  SearchFlags search;
  std::string machine_file, package, plan_file, write_plan, dump_after;
  std::uint32_t stream_words = compiler::kDefaultStreamWords, micro_batches = 1;
  bool json = false, fuse_qkv = true, no_fuse_qkv = false, steps = false, kernels = false, list_passes = false;
  CLI::Option* micro_batches_option = nullptr;
  CLI::App* app_ = nullptr;

  CommandAction setup(CLI::App& app) {
    app_ = &app;
    model.add_to(app, false);
    app.add_option("--batch", model.batch, kBatchHelp)->capture_default_str();
    app.add_option("--machine", machine_file,
                   "machine description file, or an embedded machine: " + target::builtin_machine_names() +
                       " (default: c600)");
    micro_batches_option = app.add_option("--micro-batches", micro_batches, kMicroBatchesHelp)->capture_default_str();
    app.add_option("--exchange-stream-words", stream_words, "exchange waves of at most W words per stream")
        ->check(CLI::Range(compiler::kMinStreamWords, compiler::kMaxStreamWords))
        ->capture_default_str();
    // Two plain flags: a negated CLI11 flag shows a default ({false}) that is refused.
    app.add_flag("--fuse-qkv", fuse_qkv, "one fused QKV GEMM (always on: the graph fuses q, k and v)");
    app.add_flag("--no-fuse-qkv", no_fuse_qkv, "refused: the graph always fuses q, k and v");
    app.add_option("--package", package,
                   "output package file ('-': standard output, the report then goes to stderr; with --json as its "
                   "only line)");
    app.add_option("--plan", plan_file, "fix every GEMM and attention grid from this plan file (from --write-plan)");
    app.add_option("--write-plan", write_plan, "write the grids the compiler used as a plan file (JSON)");
    profiling.add_to(app, false);
    search.add_to(app);
    app.add_flag("--json", json, "print one JSON object");
    app.add_flag("--steps", steps, "also list every superstep: estimated compute and exchange cycles, bytes");
    app.add_flag("--kernels", kernels,
                 "also list per operation and kernel kind the longest call: cycles, uncalibrated part, shape");
    app.add_flag("--list-passes", list_passes, "list the compile pipeline's passes in order, and exit");
    app.add_option("--dump-after", dump_after,
                   "print the program after this pass (--list-passes) on standard output; the report then goes to "
                   "stderr");
    return [this] { return run(); };
  }

  // Flags that would change nothing in a package are refused rather than ignored.
  void check_flags() const {
    if (model.given("--seed"))
      throw Error("--seed: a package holds no weights or images (give --seed to run or reference)", kExitUsage);
    if (no_fuse_qkv) throw Error("--no-fuse-qkv: not supported, the graph always fuses q, k and v", kExitUsage);
    profiling.check_consistent();
    for (const std::string* out : {&package, &write_plan})
      if (!out->empty()) check_output_writable(*out);
    search.check(!plan_file.empty());
    if ((package == "-") + (write_plan == "-") + (search.report_file == "-") + !dump_after.empty() > 1)
      throw Error("--package -, --write-plan -, --optimization-report -, --dump-after: only one output can go to "
                  "standard output",
                  kExitUsage);
    if (!dump_after.empty()) pass_named(dump_after);
  }

  // A machine of several chips: the model pipelined over them, each stage's plan searched
  // as --optimization-steps says, or pinned by a pipeline plan file (docs/SCALE_OUT.md).
  int run_pipeline() const {
    if (steps || kernels)
      throw Error("--steps, --kernels: not for a machine of several chips (list a stage's: compile it for one chip "
                  "with --layers)",
                  kExitUsage);
    if (!dump_after.empty())
      throw Error("--dump-after: not for a machine of several chips (dump a stage: compile it for one chip with "
                  "--layers)",
                  kExitUsage);
    return compile_pipeline_command({model, machine_file, package, {compiler::Plan{{}, stream_words}, profiling.options(), {}},
                                     json, micro_batches,
                                     search.for_stages(!plan_file.empty()), search.report_file, plan_file, write_plan});
  }

  static const compiler::PassInfo& pass_named(const std::string& name) {
    std::string names;
    for (const compiler::PassInfo& p : compiler::compile_passes()) {
      if (name == p.name) return p;
      names += std::string(names.empty() ? "" : ", ") + p.name;
    }
    throw Error("--dump-after " + name + ": no such pass (the passes: " + names + ")", kExitUsage);
  }

  // --list-passes answers alone: any other flag would be ignored.
  int print_passes() const {
    for (const CLI::Option* o : app_->get_options())
      if (o->count() > 0 && o->get_name() != "--list-passes" && o->get_name() != "--json")
        throw Error(o->get_name() + ": not with --list-passes (it lists the passes and exits)", kExitUsage);
    nlohmann::json list = nlohmann::json::array();
    for (const compiler::PassInfo& p : compiler::compile_passes()) {
      list.push_back({{"name", p.name}, {"what", p.what}});
      if (!json) std::printf("%-20s %s\n", p.name, p.what);
    }
    if (json) std::cout << nlohmann::json{{"passes", list}}.dump(1) << "\n";
    return kExitOk;
  }

  // The chosen plan compiled again (compiles are deterministic), the program printed after
  // the pass --dump-after names; a re-plan under a GEMM cap prints its last round only.
  void dump_program(const compiler::Graph& graph, const target::MachineDescription& machine,
                    const compiler::CompiledModel& compiled) const {
    std::string text;
    const compiler::PassInfo& wanted = pass_named(dump_after);
    compiler::CompileOptions options{compiled.plan, profiling.options(), compiled.stats.gemm_tile_bytes_cap};
    compiler::compile_model(graph, machine, options, [&](const compiler::PassInfo& pass, const compiler::CompiledProgram& p) {
      if (std::string(pass.name) == wanted.name) text = compiler::dump_program(p);
    });
    std::cout << "// after " << wanted.name << ": " << wanted.what << "\n" << text;
  }

  // An output on standard output moves the report to stderr.
  bool report_on_stderr() const {
    return package == "-" || write_plan == "-" || search.report_file == "-" || !dump_after.empty();
  }

  int run() {
    if (list_passes) return print_passes();
    model.apply_threads();
    check_flags();
    if (json && report_on_stderr()) silence_progress();  // the JSON is stderr's only line
    if (is_pipeline_machine(machine_file)) return run_pipeline();
    if (micro_batches_option->count()) refuse_micro_batches_on_one_chip();
    const auto t0 = std::chrono::steady_clock::now();
    const target::MachineDescription machine = target::machine_from_option(machine_file);
    const model::ViTConfig config = model.config();
    const compiler::Graph graph = compiler::build_vit_graph(config, model.numerics());
    progress("compiling " + config.name + " (" + layers_text(config.layers) + ") for " + machine.name);
    const PlannedCompile planned =
        compile_planned(graph, machine, {compiler::Plan{{}, stream_words}, profiling.options()}, plan_file, search);
    const compiler::CompiledModel& compiled = planned.compiled;
    if (!write_plan.empty()) write_text_atomically(write_plan, compiler::plan_file_text(planned.plan));
    if (!dump_after.empty()) dump_program(graph, machine, compiled);
    std::string sha;
    std::uint64_t package_bytes = 0;
    {
      const package::ContainerWriter writer = package::encode_package(compiled.executable);
      const auto bytes = writer.bytes();
      package_bytes = bytes.size();
      sha = package::sha256_hex(bytes);
      if (!package.empty()) write_bytes_atomically(package, bytes);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& s = compiled.stats;
    nlohmann::json j;
    j["model"] = config.name;
    j["parameters"] = config.parameter_count();
    j["image_size"] = config.image_size;  // of a preprocessed input: [3, image_size, image_size]
    j["package_sha256"] = sha;
    j["package_bytes"] = package_bytes;
    if (!package.empty()) j["package"] = package;
    j["machine"] = machine.name;
    j["profiling"] = profiling.enabled ? nlohmann::json(profiling.granularity) : nlohmann::json(false);
    j["compile_seconds"] = seconds;
    if (!plan_file.empty()) j["plan"] = plan_file;
    if (!write_plan.empty()) j["plan_written"] = write_plan;
    j["tiles_used"] = s.tiles_used;
    j["supersteps"] = s.supersteps;
    j["executed_supersteps"] = s.executed_supersteps;
    j["kernel_calls"] = s.kernel_calls;
    j["transfers"] = s.transfers;
    j["exchange_bytes_per_call"] = s.exchange_bytes;
    j["peak_tile_bytes"] = s.peak_tile_bytes;
    j["largest_hole_min"] = s.largest_hole_min;
    // The fastest grids did not fit: the GEMM grids were chosen under this per-tile cap.
    if (s.gemm_tile_bytes_cap != 0) j["gemm_tile_bytes_cap"] = s.gemm_tile_bytes_cap;
    j["weight_bytes"] = s.weight_bytes;
    j["unique_weight_bytes"] = s.unique_weight_bytes;
    j["weight_replication"] = s.unique_weight_bytes ? double(s.weight_bytes) / double(s.unique_weight_bytes) : 0.0;
    j["exchange_table_bytes_max"] = s.exchange_table_bytes_max;
    j["estimated_cycles"] = s.estimated_cycles;
    j["estimated_compute_cycles"] = s.estimated_compute_cycles;
    j["estimated_exchange_cycles"] = s.estimated_exchange_cycles;
    j["estimated_sync_cycles"] = s.estimated_sync_cycles;
    j["estimated_ms"] = double(s.estimated_cycles) / double(machine.clock_hz) * 1e3;
    const auto coverage = compiler::calibration_coverage(machine, compiled.executable.program);
    j["kernel_calibration"] = coverage_json(coverage);
    j["model_validation"] = target::model_validation_json();
    if (kernels) j["kernel_maxima"] = kernel_maxima_json(compiler::kernel_maxima(machine, compiled.executable.program));
    if (planned.report) j["optimization"] = *planned.report;
    if (steps) j["steps"] = job::steps_json(machine, compiled.executable.program);
    // With the package on standard output, the report goes to stderr.
    std::ostream& report = report_on_stderr() ? std::cerr : std::cout;
    if (json) {
      report << (report_on_stderr() ? j.dump() : j.dump(1)) << "\n";
    } else {
      j.erase("kernel_calibration");  // one readable line instead, and one for the validation
      j.erase("model_validation");
      print_text(report, j);
      report << compiler::coverage_text(coverage) << "\n" << target::model_validation_line() << "\n";
    }
    return kExitOk;
  }

  // One "name: value" line per figure (numbers with thousands separators, strings bare),
  // and --steps as a table.
  static void print_text(std::ostream& out, const nlohmann::json& j) {
    for (const auto& [key, value] : j.items()) {
      if (key == "steps") continue;
      out << key << ": " << (key == "optimization" ? search_summary(value) : text_value(value)) << "\n";
    }
    if (!j.contains("steps")) return;
    out << "step  label                                    loop  calls  compute cycles  transfers  exchange cycles"
           "  floor cycles  ratio\n";
    for (const auto& row : j["steps"]) {
      const auto floor = row["floor_cycles"].get<std::uint64_t>(), exchange = row["exchange_cycles"].get<std::uint64_t>();
      char ratio[16] = "";
      if (floor > 0) std::snprintf(ratio, sizeof ratio, "%.2f", double(exchange) / double(floor));
      char line[256];
      std::snprintf(line, sizeof line, "%4llu  %-40s %4s %6s %15s %10s %16s %13s %6s\n",
                    (unsigned long long)row["step"].get<std::uint64_t>(), row["label"].get<std::string>().substr(0, 40).c_str(),
                    row["in_loop"].get<bool>() ? "yes" : "", text_value(row["kernel_calls"]).c_str(),
                    text_value(row["compute_cycles"]).c_str(), text_value(row["transfers"]).c_str(),
                    text_value(row["exchange_cycles"]).c_str(), floor ? text_value(row["floor_cycles"]).c_str() : "", ratio);
      out << line;
    }
  }

  // The plan search in one line; the whole report is in --json and --optimization-report.
  static std::string search_summary(const nlohmann::json& r) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.4f", r["result_vs_baseline"].get<double>());
    return text_value(r["candidates_compiled"]) + " candidates, " + text_value(r["baseline"]["estimated_cycles"]) +
           " -> " + text_value(r["result"]["estimated_cycles"]) + " cycles (" + ratio + "x the heuristic plan), stopped: " +
           r["stopped"].get<std::string>();
  }

  static std::string text_value(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0))
      return with_commas(v.get<std::uint64_t>());
    if (v.is_number_float()) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.4g", v.get<double>());
      return buffer;
    }
    return v.dump();
  }
};

CompileCommand command;
const CommandRegistration registration("compile", "compile the model into a static per-tile program",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli

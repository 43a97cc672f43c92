#include "sweep/sweep_dir.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"

namespace tilevit::sweep {
namespace fs = std::filesystem;

SweepDirectory::SweepDirectory(std::string dir, SweepSpec spec)
    : dir_(std::move(dir)),
      spec_(std::move(spec)),
      base_(base_machine(spec_, (fs::path(dir_) / "spec.json").string())),
      base_text_(target::to_text(base_)) {}

SweepDirectory SweepDirectory::create(const std::string& dir, const SweepSpec& spec) {
  SweepDirectory d(dir, spec);  // reads the base machine before anything is written
  const std::string path = (fs::path(dir) / "spec.json").string();
  const nlohmann::json canonical = to_json(spec);
  if (fs::exists(path)) {  // a rerun of the same spec goes on; another spec's points are not mixed in
    bool same = false;
    try {
      same = to_json(parse_sweep_spec(read_text_file(path, kMaxSpecBytes), path, "")) == canonical;
    } catch (const Error&) {  // damaged: not this spec's directory either
    }
    if (!same)
      throw Error(dir + ": holds another sweep spec's points (" + path +
                      " differs from this spec): give a new --out, or remove the directory");
  }
  fs::create_directories(fs::path(dir) / "points");
  write_text_atomically(path, canonical.dump(1) + "\n");
  return d;
}

SweepDirectory SweepDirectory::open(const std::string& dir) {
  const std::string path = (fs::path(dir) / "spec.json").string();
  if (!fs::is_regular_file(path)) throw Error(path + ": not a sweep directory (no spec.json)");
  return SweepDirectory(dir, parse_sweep_spec(read_text_file(path, kMaxSpecBytes), path, ""));
}

std::string SweepDirectory::point_path(const SweepPoint& point) const {
  char name[64];
  std::snprintf(name, sizeof name, "%06llu-%s.json", static_cast<unsigned long long>(point.index), point.id.c_str());
  return (fs::path(dir_) / "points" / name).string();
}

std::optional<nlohmann::json> SweepDirectory::finished(const SweepPoint& point) const {
  const std::string path = point_path(point);
  if (!fs::is_regular_file(path)) return std::nullopt;
  try {
    nlohmann::json r = nlohmann::json::parse(read_text_file(path, kMaxPointFileBytes));
    if (r.is_object() && r.value("id", std::string()) == point.id && r.contains("status")) return r;
  } catch (const std::exception&) {  // unreadable or truncated by hand: evaluated again
  }
  return std::nullopt;
}

void SweepDirectory::write_record(const SweepPoint& point, const nlohmann::json& record) const {
  write_text_atomically(point_path(point), record.dump(1) + "\n");
}

std::vector<std::uint64_t> strided_indices(std::uint64_t count, std::uint64_t first, std::uint64_t stride) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = first; i < count; i += std::max<std::uint64_t>(stride, 1)) out.push_back(i);
  return out;
}

namespace {

std::string point_line(const nlohmann::json& r, std::size_t done, std::size_t total) {
  char head[64];
  std::snprintf(head, sizeof head, "point %zu of %zu (#%llu %s): ", done, total,
                static_cast<unsigned long long>(r["index"].get<std::uint64_t>()), r["id"].get<std::string>().c_str());
  char tail[96];
  std::snprintf(tail, sizeof tail, " (%.2f s)", r["seconds"].get<double>());
  if (r["status"] == "ok") return head + std::to_string(r["estimated_cycles"].get<std::uint64_t>()) + " cycles" + tail;
  return std::string(head) + "failed: " + r["error"]["message"].get<std::string>() + tail;
}

}  // namespace

RunSummary run_points(const SweepDirectory& sweep, const std::vector<std::uint64_t>& indices, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  RunSummary summary;
  std::vector<SweepPoint> todo;
  for (const std::uint64_t i : indices) {
    SweepPoint p = sweep.point(i);
    const auto done = sweep.finished(p);
    if (done && (!options.retry_failed || (*done)["status"] == "ok"))
      ++summary.skipped;
    else
      todo.push_back(std::move(p));
  }
  const std::uint32_t workers = std::clamp<std::uint32_t>(options.workers, 1, std::max<std::size_t>(todo.size(), 1));
  std::vector<double> seconds(todo.size());
  std::vector<char> failed(todo.size());
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex mutex;
  std::exception_ptr error;
  const auto worker = [&] {
    if (workers > 1) set_host_threads(1);  // this thread's OpenMP loops: the workers share the cores
    EvaluateOptions eo;
    eo.search_threads = workers > 1 ? 1 : static_cast<std::uint32_t>(std::max(1, host_threads()));
    for (std::size_t k; (k = next++) < todo.size();) {
      try {
        const nlohmann::json r = evaluate_point(sweep.spec(), sweep.base(), todo[k], eo);
        sweep.write_record(todo[k], r);
        seconds[k] = r["seconds"].get<double>();
        failed[k] = r["status"] != "ok";
        const std::lock_guard lock(mutex);
        ++done;
        if (options.progress) options.progress(point_line(r, done, todo.size()));
      } catch (...) {  // cannot write a record, out of memory: stop handing out points
        const std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = todo.size();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::uint32_t t = 1; t < workers; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  summary.evaluated = todo.size();
  summary.failed = static_cast<std::uint64_t>(std::count(failed.begin(), failed.end(), 1));
  summary.point_seconds = seconds;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return summary;
}

}  // namespace tilevit::sweep

#include "compiler/plan_search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

using Clock = std::chrono::steady_clock;

std::uint32_t min_headroom(const CompiledModel& m) {
  std::uint32_t least = UINT32_MAX;
  for (const TileMemoryStats& t : m.memory) least = std::min(least, t.free_at_peak);
  return least == UINT32_MAX ? 0 : least;
}

// SplitMix64: the same sequence on every platform (std distributions are not).
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// A proposal of a round: the child plan, whose change from which plan, and the cycles
// the screening predicts for it.
struct Proposal {
  // The local estimate's change as a fraction of the op's estimate: the estimate misses
  // exchange and placement effects, so near-ties of any op are worth compiling before
  // clear losses of a small one.
  double score = 0;
  bool promising = false;  // predicted faster than its parent, or not predictable
  Candidate candidate;
};

// A change as the search learns from it: the same op going from the same value to the
// same value, on any plan.
std::string transition(const Plan& from, const Move& move) {
  Move same = move;  // a layout match is a GEMM grid: learnt either way
  if (same.lever == Lever::layout_match) same.lever = Lever::gemm_grid;
  return same.identity() + " from " + lever_value(from, same);
}

std::string signed_text(std::int64_t v) { return (v > 0 ? "+" : "") + std::to_string(v); }

class Search {
 public:
  Search(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& base,
         const PlanSearchOptions& options)
      : graph_(graph), machine_(machine), base_(base), options_(options), rng_{options.seed}, t0_(Clock::now()) {}

  PlanSearchResult run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool out_of_time() const { return options_.max_seconds > 0 && elapsed() >= options_.max_seconds; }
  void say(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }
  // Order of preference: fewer cycles, then the baseline, then the canonical key.
  auto rank(const Candidate& c, bool baseline) const { return std::make_tuple(c.cycles, !baseline, c.key); }
  bool before(int a, int b) const {
    return rank(report_.candidates[a], a == 0) < rank(report_.candidates[b], b == 0);
  }
  std::vector<int> beam() const;
  std::vector<Candidate> next_round(std::uint32_t slots);
  std::optional<Candidate> merge_gains() const;
  void learn(const Plan& parent, const Move& move, std::int64_t change);
  void evaluate(Candidate& c, std::optional<CompiledModel>* model) const;
  void evaluate_round(std::vector<Candidate>& round);
  void offer(const Candidate& c, CompiledModel&& model);
  void finish_report();

  const Graph& graph_;
  const target::MachineDescription& machine_;
  const CompileOptions& base_;
  const PlanSearchOptions& options_;
  std::optional<Proposals> proposals_;
  PlanSearchReport report_;
  std::set<std::string> seen_;                  // keys compiled or queued
  std::map<std::string, std::int64_t> observed_;  // transition -> measured change of its first evaluation
  SplitMix rng_;
  Clock::time_point t0_;
  std::mutex best_mutex_;
  std::optional<CompiledModel> best_model_;
  std::tuple<std::uint64_t, bool, std::string> best_rank_;
};

std::vector<int> Search::beam() const {
  std::vector<int> fitted;
  for (int i = 0; i < static_cast<int>(report_.candidates.size()); ++i)
    if (report_.candidates[i].fits) fitted.push_back(i);
  std::sort(fitted.begin(), fitted.end(), [&](int a, int b) { return before(a, b); });
  if (fitted.size() > options_.beam_width) fitted.resize(options_.beam_width);
  return fitted;
}

// What a change measured: its own change, and (when not known yet) the opposite change
// back to the parent's value, so a plan with the change is not proposed the way back.
void Search::learn(const Plan& parent, const Move& move, std::int64_t change) {
  observed_.emplace(transition(parent, move), change);
  const Move back = reverse_move(parent, move);
  observed_.emplace(transition(apply_move(parent, move), back), -change);
}

// The best plan with every single change measured faster than its parent applied (per op
// and lever the largest gain): changes to different ops mostly add up, and one candidate
// confirms them together (a gain measured on another plan is not proposed again as a
// child, so even one is worth merging). Nothing when none would change or the plan was seen.
std::optional<Candidate> Search::merge_gains() const {
  std::map<std::string, std::pair<std::int64_t, const Move*>> gains;  // "lever op" -> best gain
  for (std::size_t i = 1; i < report_.candidates.size(); ++i) {
    const Candidate& c = report_.candidates[i];
    if (!c.fits || c.moves.size() != 1) continue;
    const std::int64_t change = std::int64_t(c.cycles) - std::int64_t(report_.candidates[c.parent].cycles);
    const std::string slot = std::string(to_string(c.moves[0].lever)) + " " + c.moves[0].op;
    const auto it = gains.find(slot);
    if (change < 0 && (it == gains.end() || change < it->second.first)) gains[slot] = {change, &c.moves[0]};
  }
  const int best = beam().front();
  Candidate merged;
  merged.parent = best;
  merged.plan = report_.candidates[best].plan;
  for (const auto& [slot, gain] : gains) {
    const Move& m = *gain.second;
    if (lever_value(merged.plan, m) == move_value(m)) continue;
    merged.moves.push_back(m);
    merged.plan = apply_move(merged.plan, m);
  }
  merged.key = merged.plan.key();
  if (merged.moves.empty() || seen_.count(merged.key)) return std::nullopt;
  return merged;
}

// The round's candidates: the merged gains, then every unseen and unmeasured child of the
// beam scored by its local estimate: each lever's best first when it is promising
// (diversity), then the best scored, then random picks.
std::vector<Candidate> Search::next_round(std::uint32_t slots) {
  std::vector<Proposal> pool;
  std::set<std::string> pooled;
  for (int parent : beam()) {
    const Candidate& p = report_.candidates[parent];
    for (const Move& move : proposals_->moves_from(p.plan)) {
      Candidate c;
      c.plan = apply_move(p.plan, move);
      c.key = c.plan.key();
      if (seen_.count(c.key) || !pooled.insert(c.key).second) continue;
      // A measured change is not tried again on another plan: one that did not help is
      // known, one that did is merged into the best plan (merge_gains).
      if (observed_.count(transition(p.plan, move))) continue;
      c.parent = parent;
      c.moves = {move};
      // A change with no local estimate (W) is worth one try.
      const bool promising = move.estimated_delta < 0 || !move.has_estimate;
      pool.push_back({move.estimated_gap, promising, std::move(c)});
    }
  }
  std::stable_sort(pool.begin(), pool.end(), [](const Proposal& a, const Proposal& b) {
    return std::tie(a.score, a.candidate.key) < std::tie(b.score, b.candidate.key);
  });
  std::vector<bool> taken(pool.size(), false);
  std::vector<Candidate> round;
  std::set<std::string> changes;  // move identities taken: one parent per change and round
  if (std::optional<Candidate> merged = merge_gains()) {
    for (const Move& m : merged->moves) changes.insert(m.identity());
    seen_.insert(merged->key);
    round.push_back(std::move(*merged));
    if (round.size() == slots) return round;
  }
  auto take = [&](std::size_t i) {
    taken[i] = true;
    changes.insert(pool[i].candidate.moves[0].identity());
    round.push_back(pool[i].candidate);
  };
  const std::uint32_t random = pool.size() > slots ? std::min(options_.random_picks, slots - 1) : 0;
  // The loop body's best layout matches first (gap -executions): the largest measured
  // gains; then the best scored (W and tile offsets, unestimated, rank before estimated
  // moves); then diversity among the estimated levers.
  auto open_slot = [&] { return round.size() + random < slots; };
  for (std::size_t i = 0; i < pool.size() && open_slot(); ++i)
    if (pool[i].score <= -2.0 && !changes.count(pool[i].candidate.moves[0].identity())) take(i);
  for (std::size_t i = 0; i < pool.size() && open_slot(); ++i)
    if (!taken[i] && !changes.count(pool[i].candidate.moves[0].identity())) {
      take(i);
      break;
    }
  for (std::size_t lever = 0; lever < kLevers && round.size() + random < slots; ++lever)
    for (std::size_t i = 0; i < pool.size(); ++i)
      if (static_cast<std::size_t>(pool[i].candidate.moves[0].lever) == lever &&
          !changes.count(pool[i].candidate.moves[0].identity())) {
        if (pool[i].promising && pool[i].candidate.moves[0].has_estimate) take(i);
        break;
      }
  for (std::size_t i = 0; i < pool.size() && round.size() + random < slots; ++i)
    if (!taken[i] && !changes.count(pool[i].candidate.moves[0].identity())) take(i);
  for (std::uint32_t r = 0; r < random; ++r) {
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < pool.size(); ++i)
      if (!taken[i] && !changes.count(pool[i].candidate.moves[0].identity())) rest.push_back(i);
    if (rest.empty()) break;
    take(rest[rng_.next() % rest.size()]);
  }
  for (const Candidate& c : round) seen_.insert(c.key);
  return round;
}

void Search::evaluate(Candidate& c, std::optional<CompiledModel>* model) const {
  CompileOptions o = base_;
  o.plan = c.plan;
  try {
    CompiledModel m = compile_model(graph_, machine_, o);
    c.fits = true;
    c.cycles = m.stats.estimated_cycles;
    c.uncalibrated_cycles = m.stats.estimated_uncalibrated_cycles;
    c.sram_headroom = min_headroom(m);
    if (model) model->emplace(std::move(m));
  } catch (const Error& e) {
    if (e.exit_code() == kExitInternal) throw;
    c.fits = false;
    c.failure = e.what();
  }
}

void Search::offer(const Candidate& c, CompiledModel&& model) {
  const std::lock_guard<std::mutex> lock(best_mutex_);
  auto r = rank(c, false);
  if (r < best_rank_) {
    best_rank_ = std::move(r);
    best_model_.emplace(std::move(model));
  }
}

// Compiles the round's candidates on up to options.threads threads. Each result depends
// on its plan only; candidates not started when the time cap passes are dropped.
void Search::evaluate_round(std::vector<Candidate>& round) {
  std::vector<char> done(round.size(), 0);
  std::vector<std::exception_ptr> errors(round.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < round.size();) {
      if (out_of_time()) continue;
      try {
        std::optional<CompiledModel> model;
        evaluate(round[i], &model);
        if (model) offer(round[i], std::move(*model));
        done[i] = 1;
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(options_.threads, 1, round.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<Candidate> kept;
  for (std::size_t i = 0; i < round.size(); ++i)
    if (done[i]) kept.push_back(std::move(round[i]));
  report_.cut_by_time |= kept.size() < round.size();
  round = std::move(kept);
}

PlanSearchResult Search::run() {
  report_.steps = options_.steps;
  report_.seed = options_.seed;
  report_.max_seconds = options_.max_seconds;
  report_.bound = plan_lower_bound(graph_, machine_);
  Candidate baseline;
  {
    CompiledModel m = compile_model(graph_, machine_, base_);
    baseline.plan = m.plan;
    baseline.key = baseline.plan.key();
    baseline.fits = true;
    baseline.cycles = m.stats.estimated_cycles;
    baseline.uncalibrated_cycles = m.stats.estimated_uncalibrated_cycles;
    baseline.sram_headroom = min_headroom(m);
    best_rank_ = rank(baseline, true);
    best_model_.emplace(std::move(m));
  }
  seen_.insert(baseline.key);
  report_.candidates.push_back(baseline);
  report_.stopped = "no search (0 optimization steps)";
  if (options_.steps > 0) {
    say("search: baseline " + std::to_string(baseline.cycles) + " cycles; up to " + std::to_string(options_.steps) +
        " candidates");
    proposals_.emplace(graph_, machine_, ProposalLimits{options_.per_op, base_.profiling.enabled});
    report_.screened = proposals_->screened();
    std::uint32_t stale_rounds = 0;
    for (;;) {
      if (report_.evaluated >= options_.steps) {
        report_.stopped = "budget: " + std::to_string(options_.steps) + " candidates compiled";
        break;
      }
      if (out_of_time() || report_.cut_by_time) {
        report_.cut_by_time = true;
        report_.stopped = "time cap: " + std::to_string(options_.max_seconds) + " s";
        break;
      }
      if (stale_rounds >= options_.patience) {
        report_.stopped = "converged: " + std::to_string(stale_rounds) + " rounds without a faster plan";
        break;
      }
      std::vector<Candidate> round = next_round(std::min(options_.round_size, options_.steps - report_.evaluated));
      if (round.empty()) {
        report_.stopped = "no proposals left";
        break;
      }
      ++report_.rounds;
      const std::uint64_t best_before = std::get<0>(best_rank_);
      for (Candidate& c : round) c.round = report_.rounds;
      evaluate_round(round);
      for (Candidate& c : round) {
        const Candidate& parent = report_.candidates[c.parent];
        const std::int64_t change = static_cast<std::int64_t>(c.cycles) - static_cast<std::int64_t>(parent.cycles);
        if (c.fits && c.moves.size() == 1) learn(parent.plan, c.moves[0], change);
        std::string what;
        for (const Move& m : c.moves) what += (what.empty() ? "" : "; ") + to_string(describe_move(parent.plan, m));
        say("search: candidate " + std::to_string(report_.evaluated + 1) + "/" + std::to_string(options_.steps) +
            (c.moves.size() > 1 ? " (merged gains) " : " ") + what + ": " +
            (c.fits ? std::to_string(c.cycles) + " cycles (" + signed_text(change) + ")" : "does not fit"));
        ++report_.evaluated;
        report_.candidates.push_back(std::move(c));
      }
      stale_rounds = std::get<0>(best_rank_) < best_before ? 0 : stale_rounds + 1;
    }
  }
  finish_report();
  say("search: " + std::to_string(report_.candidates[report_.chosen].cycles) + " cycles (baseline " +
      std::to_string(baseline.cycles) + "), " + std::to_string(report_.evaluated) + " candidates in " +
      std::to_string(report_.seconds) + " s; stopped: " + report_.stopped);
  return PlanSearchResult{std::move(*best_model_), report_.candidates[report_.chosen].plan, std::move(report_)};
}

// The chosen plan, its chain of changes from the baseline, and the rest summarised.
void Search::finish_report() {
  report_.seconds = elapsed();
  int chosen = 0;
  for (int i = 1; i < static_cast<int>(report_.candidates.size()); ++i)
    if (report_.candidates[i].fits && before(i, chosen)) chosen = i;
  report_.chosen = chosen;
  std::set<int> chain;
  for (int i = chosen; i > 0; i = report_.candidates[i].parent) {
    chain.insert(i);
    const Candidate& c = report_.candidates[i];
    const Candidate& p = report_.candidates[c.parent];
    AcceptedChange a{{}, p.cycles, c.cycles, p.uncalibrated_cycles, c.uncalibrated_cycles, c.sram_headroom};
    for (const Move& m : c.moves) a.changes.push_back(describe_move(p.plan, m));
    report_.accepted.insert(report_.accepted.begin(), std::move(a));
  }
  for (int i = 1; i < static_cast<int>(report_.candidates.size()); ++i) {
    if (chain.count(i)) continue;
    const Candidate& c = report_.candidates[i];
    RejectedSummary& s = report_.rejected[c.moves.size() == 1 ? static_cast<std::size_t>(c.moves[0].lever) : kLevers];
    ++s.count;
    if (!c.fits) ++s.did_not_fit;
    else if (s.best < 0 || before(i, s.best)) s.best = i;
  }
}

}  // namespace

PlanSearchResult search_plan(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& base,
                             const PlanSearchOptions& options) {
  Search search(graph, machine, base, options);
  return search.run();
}

}  // namespace tilevit::compiler

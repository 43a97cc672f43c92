#include "compiler/levers.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/json_fields.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

using nlohmann::json;

// The encoder's LayerNorms share the residual's layout and are split together: their
// move names them all, joined by '+'.
std::vector<std::string> joined_ops(const std::string& names) {
  std::vector<std::string> ops;
  for (std::size_t start = 0;;) {
    const std::size_t plus = names.find('+', start);
    ops.push_back(names.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (plus == std::string::npos) return ops;
    start = plus + 1;
  }
}

std::string toggle_text(Lever lever, bool enabled) {
  if (lever == Lever::split_norm) return enabled ? "split" : "rows";
  return enabled ? "fp8" : "fp16+cast";
}

template <class Map>
std::vector<std::string> keys_of(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& item : map) keys.push_back(item.first);
  return keys;
}
std::vector<std::string> names_of(const std::set<std::string>& set) { return {set.begin(), set.end()}; }

// The per-op levers that pin a set of op names: the set a lever's entry works on (one
// template for the const and the mutable plan).
template <typename P>
auto& toggled(P& plan, Lever lever) {
  if (lever == Lever::fp8_attention) return plan.pins.fp8_attention;
  return lever == Lever::split_norm ? plan.pins.split_norms : plan.pins.fp8_output_gelus;
}

// The entries of the toggles (split_norm, fp8_output): a set of ops, joined names in a
// move, and the residual GEMM a split may re-grid with it.
template <Lever L>
std::string toggle_value(const Plan& plan, const std::string& op) {
  const std::vector<std::string> ops = joined_ops(op);
  const std::set<std::string>& set = toggled(plan, L);
  return toggle_text(L, std::all_of(ops.begin(), ops.end(), [&](const std::string& o) { return set.count(o) > 0; }));
}
template <Lever L>
void toggle_apply(Plan& plan, const Move& m) {
  for (const std::string& op : joined_ops(m.op)) {
    if (m.enabled) toggled(plan, L).insert(op);
    else toggled(plan, L).erase(op);
  }
  if (!m.layout_op.empty()) plan.pins.gemm[m.layout_op] = m.gemm;
}
std::string toggle_move_text(const Move& m) {
  return toggle_text(m.lever, m.enabled) + (m.layout_op.empty() ? "" : " (" + m.layout_op + " " + splits_text(m.gemm) + ")");
}
void toggle_back(const Plan& parent, Move& back) {
  back.enabled = !back.enabled;
  if (!back.layout_op.empty()) back.gemm = parent.pins.gemm.at(back.layout_op);
}
template <Lever L>
std::vector<std::string> set_ops(const Plan& plan) { return names_of(toggled(plan, L)); }
template <Lever L>
void set_key(const Plan& plan, std::string& key, const char* suffix) {
  for (const std::string& op : toggled(plan, L)) key += ";" + op + suffix;
}
template <Lever L>
void set_write(const Plan& plan, json& file, const char* field) {
  if (!toggled(plan, L).empty()) file[field] = toggled(plan, L);
}

std::string gemm_value(const Plan& plan, const std::string& op) {
  const auto it = plan.pins.gemm.find(op);
  return it == plan.pins.gemm.end() ? "chosen" : splits_text(it->second);
}
void gemm_apply(Plan& plan, const Move& m) { plan.pins.gemm[m.op] = m.gemm; }
std::string gemm_move_text(const Move& m) { return splits_text(m.gemm); }
void gemm_back(const Plan& parent, Move& back) { back.gemm = parent.pins.gemm.at(back.op); }

constexpr LeverInfo kTable[] = {
    {Lever::gemm_grid, "gemm_grid", op_kinds({OpKind::gemm}), "GEMM", "pinned GEMM grid for op", "gemm", true, true,
     gemm_value, gemm_move_text, gemm_apply, gemm_back, [](const Plan& p) { return keys_of(p.pins.gemm); },
     [](const Plan& p, std::string& key) {
       for (const auto& [op, s] : p.pins.gemm) key += ";" + op + "=" + splits_text(s);
     },
     [](const Plan& p, json& file) {
       file["gemm"] = json::object();
       for (const auto& [op, s] : p.pins.gemm) {
         file["gemm"][op] = {{"r", s.r}, {"k", s.k}, {"c", s.c}};
         if (s.column_quantum != 0) file["gemm"][op]["column_quantum"] = s.column_quantum;
       }
     },
     [](const PlanField& f, Plan& p) {
       if (!f.value.is_object()) throw Error(f.where + ": expected an object");
       for (const auto& [op, v] : f.value.items()) {
         const std::string where = f.where + "." + op;
         check_keys(v, {"r", "k", "c"}, where, {"column_quantum"});
         p.pins.gemm[op] = {count_field(v, "r", f.max_split, where), count_field(v, "k", f.max_split, where),
                            count_field(v, "c", f.max_split, where),
                            v.contains("column_quantum") ? count_field(v, "column_quantum", f.max_split, where) : 0};
       }
     }},
    {Lever::attention_blocks, "attention_blocks", op_kinds({OpKind::attention}), "attention",
     "pinned attention blocks for op", "attention", true, true,
     [](const Plan& p, const std::string& op) {
       const auto it = p.pins.attention.find(op);
       return it == p.pins.attention.end() ? std::string("chosen") : blocks_text(it->second);
     },
     [](const Move& m) { return blocks_text(m.attention); },
     [](Plan& p, const Move& m) { p.pins.attention[m.op] = m.attention; },
     [](const Plan& parent, Move& back) { back.attention = parent.pins.attention.at(back.op); },
     [](const Plan& p) { return keys_of(p.pins.attention); },
     [](const Plan& p, std::string& key) {
       for (const auto& [op, b] : p.pins.attention) key += ";" + op + "=" + blocks_text(b);
     },
     [](const Plan& p, json& file) {
       file["attention"] = json::object();
       for (const auto& [op, b] : p.pins.attention)
         file["attention"][op] = {{"query_block", b.query_block}, {"key_block", b.key_block}};
     },
     [](const PlanField& f, Plan& p) {
       if (!f.value.is_object()) throw Error(f.where + ": expected an object");
       for (const auto& [op, v] : f.value.items()) {
         const std::string where = f.where + "." + op;
         check_keys(v, {"query_block", "key_block"}, where);
         p.pins.attention[op] = {count_field(v, "query_block", f.max_split, where),
                                 count_field(v, "key_block", f.max_split, where)};
       }
     }},
    {Lever::stream_words, "stream_words", 0, "", nullptr, "exchange_stream_words", true, false,
     [](const Plan& p, const std::string&) { return std::to_string(p.exchange_stream_words); },
     [](const Move& m) { return std::to_string(m.stream_words); },
     [](Plan& p, const Move& m) { p.exchange_stream_words = m.stream_words; },
     [](const Plan& parent, Move& back) { back.stream_words = parent.exchange_stream_words; },
     [](const Plan&) { return std::vector<std::string>{}; },
     [](const Plan& p, std::string& key) { key += "W" + std::to_string(p.exchange_stream_words); },
     [](const Plan& p, json& file) { file["exchange_stream_words"] = p.exchange_stream_words; },
     [](const PlanField& f, Plan& p) {
       const bool whole = f.value.is_number_unsigned();
       const std::uint64_t w = whole ? f.value.get<std::uint64_t>() : 0;
       if (w < kMinStreamWords || w > kMaxStreamWords)
         throw Error(f.where + ": expected a whole number in " + std::to_string(kMinStreamWords) + ".." +
                     std::to_string(kMaxStreamWords) + ", not " + f.value.dump());
       p.exchange_stream_words = static_cast<std::uint32_t>(w);
     }},
    // A layout match is a GEMM grid: it lives in the gemm pins and the plan file's "gemm".
    {Lever::layout_match, "layout_match", op_kinds({OpKind::gemm}), "GEMM", nullptr, nullptr, false, false, gemm_value,
     gemm_move_text, gemm_apply, gemm_back, [](const Plan&) { return std::vector<std::string>{}; },
     [](const Plan&, std::string&) {}, [](const Plan&, json&) {}, [](const PlanField&, Plan&) {}},
    {Lever::tile_offset, "tile_offset", op_kinds({OpKind::gemm, OpKind::attention}), "GEMM or attention",
     "pinned tile offset for op", "tile_offsets", false, false,
     [](const Plan& p, const std::string& op) {
       const auto it = p.pins.tile_offsets.find(op);
       return std::to_string(it == p.pins.tile_offsets.end() ? 0u : it->second);
     },
     [](const Move& m) { return std::to_string(m.tile_offset); },
     [](Plan& p, const Move& m) {
       if (m.tile_offset == 0) p.pins.tile_offsets.erase(m.op);
       else p.pins.tile_offsets[m.op] = m.tile_offset;
     },
     [](const Plan& parent, Move& back) {
       const auto it = parent.pins.tile_offsets.find(back.op);
       back.tile_offset = it == parent.pins.tile_offsets.end() ? 0 : it->second;
     },
     [](const Plan& p) { return keys_of(p.pins.tile_offsets); },
     [](const Plan& p, std::string& key) {
       for (const auto& [op, t] : p.pins.tile_offsets) key += ";" + op + "@" + std::to_string(t);
     },
     [](const Plan& p, json& file) {
       if (!p.pins.tile_offsets.empty()) file["tile_offsets"] = p.pins.tile_offsets;
     },
     [](const PlanField& f, Plan& p) {
       if (!f.value.is_object()) throw Error(f.where + ": expected an object");
       for (const auto& [op, v] : f.value.items())
         p.pins.tile_offsets[op] = count_field(f.value, op.c_str(), f.tiles - 1, f.where);
     }},
    {Lever::fp8_attention, "fp8_attention", op_kinds({OpKind::attention}), "attention", "pinned FP8 attention for op",
     "fp8_attention", false, false,
     [](const Plan& p, const std::string& op) { return std::string(p.pins.fp8_attention.contains(op) ? "fp8" : "fp16"); },
     [](const Move& m) { return std::string(m.fp8 ? "fp8" : "fp16"); },
     [](Plan& p, const Move& m) {
       if (m.fp8) p.pins.fp8_attention.insert(m.op);
       else p.pins.fp8_attention.erase(m.op);
     },
     [](const Plan& parent, Move& back) { back.fp8 = parent.pins.fp8_attention.contains(back.op); },
     set_ops<Lever::fp8_attention>, [](const Plan& p, std::string& key) { set_key<Lever::fp8_attention>(p, key, ":fp8"); },
     [](const Plan& p, json& file) { set_write<Lever::fp8_attention>(p, file, "fp8_attention"); },
     [](const PlanField& f, Plan& p) { p.pins.fp8_attention = op_name_list(f.value, f.where); }},
    {Lever::split_norm, "split_norm", op_kinds({OpKind::layernorm}), "LayerNorm", "split LayerNorm", "split_norms", false, false,
     toggle_value<Lever::split_norm>, toggle_move_text, toggle_apply<Lever::split_norm>, toggle_back,
     set_ops<Lever::split_norm>, [](const Plan& p, std::string& key) { set_key<Lever::split_norm>(p, key, ":split"); },
     [](const Plan& p, json& file) { set_write<Lever::split_norm>(p, file, "split_norms"); },
     [](const PlanField& f, Plan& p) { p.pins.split_norms = op_name_list(f.value, f.where); }},
    {Lever::fp8_output, "fp8_output", op_kinds({OpKind::gelu}), "GELU", "FP8-output GELU", "fp8_output_gelus", false, false,
     toggle_value<Lever::fp8_output>, toggle_move_text, toggle_apply<Lever::fp8_output>, toggle_back,
     set_ops<Lever::fp8_output>, [](const Plan& p, std::string& key) { set_key<Lever::fp8_output>(p, key, ":fp8"); },
     [](const Plan& p, json& file) { set_write<Lever::fp8_output>(p, file, "fp8_output_gelus"); },
     [](const PlanField& f, Plan& p) { p.pins.fp8_output_gelus = op_name_list(f.value, f.where); }},
};

constexpr bool one_entry_per_lever_in_order() {
  if (std::size(kTable) != kLevers) return false;
  for (std::size_t i = 0; i < std::size(kTable); ++i)
    if (static_cast<std::size_t>(kTable[i].lever) != i) return false;
  return true;
}
static_assert(one_entry_per_lever_in_order(), "lever table: one entry per Lever, in enum order");
static_assert(static_cast<std::size_t>(Lever::fp8_output) + 1 == kLevers, "kLevers");

}  // namespace

std::span<const LeverInfo> lever_table() { return kTable; }
const LeverInfo& lever_info(Lever lever) { return kTable[static_cast<std::size_t>(lever)]; }
const char* to_string(Lever lever) {
  return static_cast<std::size_t>(lever) < kLevers ? lever_info(lever).name : "?";
}

std::string splits_text(const GemmSplits& s) {
  return std::to_string(s.r) + "x" + std::to_string(s.k) + "x" + std::to_string(s.c) +
         (s.column_quantum ? "/" + std::to_string(s.column_quantum) : "");
}
std::string blocks_text(const AttentionBlocks& b) {
  return std::to_string(b.query_block) + "x" + std::to_string(b.key_block);
}

std::string Plan::key() const { return plan_key(*this, lever_table()); }

std::string plan_key(const Plan& plan, std::span<const LeverInfo> levers) {
  std::string key;
  for (const LeverInfo& l : levers)
    if (l.op_kinds == 0) l.append_key(plan, key);
  for (const LeverInfo& l : levers)
    if (l.op_kinds != 0) l.append_key(plan, key);
  return key;
}

std::string Move::identity() const {
  // A split is one change whatever residual layout comes with it: measured once, it is
  // not proposed again with the layout another plan would match.
  const std::string value = lever == Lever::split_norm ? toggle_text(lever, enabled) : move_value(*this);
  return std::string(to_string(lever)) + ":" + op + "=" + value;
}

Plan apply_move(const Plan& plan, const Move& move) {
  Plan out = plan;
  lever_info(move.lever).apply(out, move);
  return out;
}
std::string lever_value(const Plan& plan, const Move& move) { return lever_info(move.lever).value(plan, move.op); }
std::string move_value(const Move& move) { return lever_info(move.lever).move_text(move); }
Move reverse_move(const Plan& parent, const Move& move) {
  Move back = move;
  lever_info(move.lever).take_value(parent, back);
  return back;
}

Change describe_move(const Plan& from, const Move& move) {
  return Change{move.lever, move.op, lever_value(from, move), move_value(move)};
}

std::string to_string(const Change& c) {
  return (c.op.empty() ? "" : c.op + " ") + to_string(c.lever) + " " + c.old_value + " -> " + c.new_value;
}

void check_pins_name_ops(const Graph& graph, const Plan& plan, std::span<const LeverInfo> levers) {
  std::map<std::string, std::uint32_t> kinds;  // op name -> its kinds' bits
  for (const std::vector<Op>* ops : {&graph.prologue, &graph.body, &graph.epilogue})
    for (const Op& op : *ops) kinds[op.name] |= 1u << static_cast<unsigned>(op.kind);
  for (const LeverInfo& l : levers)
    for (const std::string& name : l.pinned_ops(plan)) {
      const auto it = kinds.find(name);
      if (it == kinds.end() || (it->second & l.op_kinds) == 0)
        throw RefusedPin(std::string(l.pin_text) + " " + name + ": the graph has no " + l.kinds_text + " of that name");
    }
}

void check_plan_pins_every_op(const Graph& graph, const Plan& plan, std::span<const LeverInfo> levers) {
  for (const LeverInfo& l : levers) {
    if (!l.file_pins_every_op) continue;
    const std::vector<std::string> pinned = l.pinned_ops(plan);
    for (const std::vector<Op>* ops : {&graph.prologue, &graph.body, &graph.epilogue})
      for (const Op& op : *ops)
        if ((l.op_kinds >> static_cast<unsigned>(op.kind) & 1u) &&
            std::find(pinned.begin(), pinned.end(), op.name) == pinned.end())
          throw RefusedPin(std::string(l.file_field) + "." + op.name + ": missing (a plan fixes every " + l.kinds_text +
                           " op's grid; compile --write-plan writes a whole plan)");
  }
}

void write_lever_fields(const Plan& plan, json& file, std::span<const LeverInfo> levers) {
  for (const LeverInfo& l : levers) l.write(plan, file);
}

void read_lever_fields(const json& file, const std::string& source, std::uint32_t max_split, std::uint32_t tiles,
                       Plan& plan, std::span<const LeverInfo> levers) {
  for (const LeverInfo& l : levers) {
    if (l.file_field == nullptr) continue;
    if (!file.contains(l.file_field)) {
      if (l.file_requires) throw Error(source + ": missing field \"" + l.file_field + "\"");
      continue;
    }
    l.read(PlanField{file.at(l.file_field), source + ": " + l.file_field, max_split, tiles}, plan);
  }
}

}  // namespace tilevit::compiler

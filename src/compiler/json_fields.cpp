#include "compiler/json_fields.hpp"

#include "support/error.hpp"

namespace tilevit::compiler {

using nlohmann::json;

void check_keys(const json& object, std::span<const char* const> known, const std::string& where,
                std::span<const char* const> optional) {
  // An unknown key is a typo the plan would ignore.
  if (!object.is_object()) throw Error(where + ": expected an object");
  for (const auto& item : object.items()) {
    bool ok = false;
    for (const char* k : known) ok |= item.key() == k;
    for (const char* k : optional) ok |= item.key() == k;
    if (!ok) throw Error(where + ": unknown field \"" + item.key() + "\"");
  }
  for (const char* k : known)
    if (!object.contains(k)) throw Error(where + ": missing field \"" + k + "\"");
}

namespace {
// "plan.json: gemm.layer.qkv" + "r"; a top-level field of "plan.json:" is "plan.json: batch".
std::string field_path(const std::string& where, const char* key) {
  return where + (!where.empty() && where.back() == ':' ? " " : ".") + key;
}
}  // namespace

std::uint32_t count_field(const json& object, const char* key, std::uint32_t max, const std::string& where) {
  const json& v = object.at(key);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > max)
    throw Error(field_path(where, key) + ": expected a whole number in 1.." + std::to_string(max) + ", not " + v.dump());
  return static_cast<std::uint32_t>(v.get<std::uint64_t>());
}

std::string string_field(const json& object, const char* key, const std::string& where) {
  const json& v = object.at(key);
  if (!v.is_string() || v.get<std::string>().size() > 256) throw Error(field_path(where, key) + ": expected a short string");
  return v.get<std::string>();
}

std::set<std::string> op_name_list(const json& v, const std::string& where) {
  std::set<std::string> names;
  if (!v.is_array()) throw Error(where + ": expected an array of op names");
  for (const json& name : v) {
    if (!name.is_string() || name.get<std::string>().empty() || name.get<std::string>().size() > 256)
      throw Error(where + ": expected op names, not " + name.dump());
    if (!names.insert(name.get<std::string>()).second)
      throw Error(where + ": op " + name.get<std::string>() + " named twice");
  }
  return names;
}

}  // namespace tilevit::compiler

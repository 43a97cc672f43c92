#pragma once
// Checked reads of a JSON object's fields for the compiler's files (plan files and their
// lever fields): each failure one line naming the file and field, Error(kExitBadInput).
#include <cstdint>
#include <initializer_list>
#include <set>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace tilevit::compiler {

// Every key of `object` is `known` or `optional`, and every `known` one is present.
void check_keys(const nlohmann::json& object, std::span<const char* const> known, const std::string& where,
                std::span<const char* const> optional = {});
inline void check_keys(const nlohmann::json& object, std::initializer_list<const char*> known, const std::string& where,
                       std::initializer_list<const char*> optional = {}) {
  check_keys(object, std::span<const char* const>(known.begin(), known.size()), where,
             std::span<const char* const>(optional.begin(), optional.size()));
}
// A whole number in 1..max. `where` is the object's path, "file.json: gemm.op", or "file.json:" for
// the top level (errors name "file.json: gemm.op.r", "file.json: batch").
std::uint32_t count_field(const nlohmann::json& object, const char* key, std::uint32_t max, const std::string& where);
// A string of at most 256 bytes.
std::string string_field(const nlohmann::json& object, const char* key, const std::string& where);
// An array of distinct, non-empty op names.
std::set<std::string> op_name_list(const nlohmann::json& value, const std::string& where);

}  // namespace tilevit::compiler

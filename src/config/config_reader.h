// ConfigReader: typed access to a LocatedDoc that reports every problem (unknown key,
// wrong type, out of range, bad regex) with its source position and keeps going.
// Pointers are JSON pointers into the document ("" is the root).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostics.h"
#include "config/located_yaml.h"
#include "reins/enum_names.h"

namespace reins {

class ConfigReader {
 public:
  ConfigReader(const LocatedDoc& doc, Diagnostics& diag) : doc_(doc), diag_(diag) {}

  const LocatedDoc& doc() const { return doc_; }
  void Error(const std::string& pointer, const std::string& message);
  // An error about the field `key` of the mapping at `obj`.
  void FieldError(const std::string& obj, std::string_view key, const std::string& message);
  // The value at `pointer`, or nullptr.
  const Json* Get(const std::string& pointer) const;
  bool Has(const std::string& obj, std::string_view key) const;

  // True when `pointer` holds a mapping; reports keys outside `allowed` ("what" names
  // the mapping in messages, e.g. "tool").
  bool Mapping(const std::string& pointer, std::initializer_list<std::string_view> allowed,
               std::string_view what);
  bool IsMapping(const std::string& pointer) const;

  // Field readers on the mapping at `obj`. A missing optional field yields nullopt
  // silently; a missing required one or a wrong type is reported.
  std::optional<std::string> String(const std::string& obj, std::string_view key, bool required = false);
  std::optional<int64_t> Int(const std::string& obj, std::string_view key, int64_t min, int64_t max);
  std::optional<double> Number(const std::string& obj, std::string_view key, double min, double max);
  std::optional<bool> Bool(const std::string& obj, std::string_view key);
  std::optional<std::vector<std::string>> StringList(const std::string& obj, std::string_view key);
  // A string that must be one of `allowed`.
  std::optional<std::string> Enum(const std::string& obj, std::string_view key,
                                  std::initializer_list<std::string_view> allowed);
  // The same for an enum with a names table (reins/enum_names.h).
  template <typename E, size_t N>
  std::optional<E> Enum(const std::string& obj, std::string_view key, const EnumNames<E, N>& names) {
    std::optional<std::string> s = String(obj, key);
    if (!s) return std::nullopt;
    if (std::optional<E> e = names.Parse(*s)) return e;
    std::string message = "'" + std::string(key) + "' must be one of";
    for (const auto& entry : names.entries) message += " " + std::string(entry.second);
    FieldError(obj, key, message + ", got '" + *s + "'");
    return std::nullopt;
  }
  // An http:// or https:// URL without credentials in it (user:password@ ends up in
  // logs and error messages; secrets belong in api_key or headers).
  std::optional<std::string> Url(const std::string& obj, std::string_view key, bool required = false);
  // Reports a pattern RE2 cannot compile. True when it compiles.
  bool CheckRegex(const std::string& pointer, const std::string& pattern);

 private:
  const LocatedDoc& doc_;
  Diagnostics& diag_;
};

// "a mapping", "a string", ... for messages about a JSON value's type.
std::string DescribeType(const Json& v);

// The candidate within two edits of `word` (a likely typo), if any, for "did you mean".
std::optional<std::string_view> ClosestName(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace reins

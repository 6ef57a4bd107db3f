#include "config/config_reader.h"

#include <algorithm>

#include <re2/re2.h>

namespace reins {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string Field(const std::string& obj, std::string_view key) {
  return JoinPointer(obj, std::string(key));
}

}  // namespace

std::string DescribeType(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: return "a mapping";
    case Json::value_t::array: return "a list";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::null: return "empty";
    default: return "an unsupported value";
  }
}

void ConfigReader::Error(const std::string& pointer, const std::string& message) {
  diag_.Add(doc_.MarkOf(pointer), message);
}

const Json* ConfigReader::Get(const std::string& pointer) const {
  Json::json_pointer ptr(pointer);
  if (!doc_.value.contains(ptr)) return nullptr;
  return &doc_.value.at(ptr);
}

bool ConfigReader::Has(const std::string& obj, std::string_view key) const {
  const Json* o = Get(obj);
  return o != nullptr && o->is_object() && o->contains(std::string(key));
}

bool ConfigReader::IsMapping(const std::string& pointer) const {
  const Json* v = Get(pointer);
  return v != nullptr && v->is_object();
}

std::optional<std::string_view> ClosestName(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best;
  size_t best_distance = 3;
  for (std::string_view c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

bool ConfigReader::Mapping(const std::string& pointer, std::initializer_list<std::string_view> allowed,
                           std::string_view what) {
  const Json* v = Get(pointer);
  if (v == nullptr || !v->is_object()) {
    Error(pointer, std::string(what) + " must be a mapping, got " + (v ? DescribeType(*v) : "nothing"));
    return false;
  }
  for (const auto& [key, value] : v->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string message = "unknown key '" + key + "' in " + std::string(what);
    if (std::optional<std::string_view> best = ClosestName(key, std::vector<std::string_view>(allowed))) {
      message += " (did you mean '" + std::string(*best) + "'?)";
    } else {
      message += " (expected one of:";
      for (std::string_view a : allowed) message += " " + std::string(a);
      message += ")";
    }
    Error(Field(pointer, key), message);
  }
  return true;
}

std::optional<std::string> ConfigReader::String(const std::string& obj, std::string_view key, bool required) {
  const Json* v = Get(Field(obj, key));
  if (v == nullptr) {
    if (required) Error(obj, "missing required key '" + std::string(key) + "'");
    return std::nullopt;
  }
  if (!v->is_string()) {
    Error(Field(obj, key), "'" + std::string(key) + "' must be a string, got " + DescribeType(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<int64_t> ConfigReader::Int(const std::string& obj, std::string_view key, int64_t min, int64_t max) {
  const Json* v = Get(Field(obj, key));
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer()) {
    Error(Field(obj, key), "'" + std::string(key) + "' must be an integer, got " + DescribeType(*v));
    return std::nullopt;
  }
  int64_t n = v->get<int64_t>();
  if (n < min || n > max) {
    Error(Field(obj, key), "'" + std::string(key) + "' must be between " + std::to_string(min) + " and " +
                               std::to_string(max) + ", got " + std::to_string(n));
    return std::nullopt;
  }
  return n;
}

std::optional<double> ConfigReader::Number(const std::string& obj, std::string_view key, double min, double max) {
  const Json* v = Get(Field(obj, key));
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    Error(Field(obj, key), "'" + std::string(key) + "' must be a number, got " + DescribeType(*v));
    return std::nullopt;
  }
  double n = v->get<double>();
  if (n < min || n > max) {
    Error(Field(obj, key), "'" + std::string(key) + "' must be between " + std::to_string(min) + " and " +
                               std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<bool> ConfigReader::Bool(const std::string& obj, std::string_view key) {
  const Json* v = Get(Field(obj, key));
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    Error(Field(obj, key), "'" + std::string(key) + "' must be true or false, got " + DescribeType(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<std::vector<std::string>> ConfigReader::StringList(const std::string& obj, std::string_view key) {
  std::string ptr = Field(obj, key);
  const Json* v = Get(ptr);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    Error(ptr, "'" + std::string(key) + "' must be a list of strings, got " + DescribeType(*v));
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      Error(JoinPointer(ptr, i), "items of '" + std::string(key) + "' must be strings, got " + DescribeType((*v)[i]));
      continue;
    }
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

void ConfigReader::FieldError(const std::string& obj, std::string_view key, const std::string& message) {
  Error(Field(obj, key), message);
}

std::optional<std::string> ConfigReader::Enum(const std::string& obj, std::string_view key,
                                              std::initializer_list<std::string_view> allowed) {
  std::optional<std::string> s = String(obj, key);
  if (!s) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *s) == allowed.end()) {
    std::string message = "'" + std::string(key) + "' must be one of";
    for (std::string_view a : allowed) message += " " + std::string(a);
    Error(Field(obj, key), message + ", got '" + *s + "'");
    return std::nullopt;
  }
  return s;
}

bool ConfigReader::CheckRegex(const std::string& pointer, const std::string& pattern) {
  RE2 re(pattern, RE2::Quiet);
  if (re.ok()) return true;
  Error(pointer, "regex '" + pattern + "' does not compile: " + re.error());
  return false;
}

std::optional<std::string> ConfigReader::Url(const std::string& obj, std::string_view key, bool required) {
  std::optional<std::string> url = String(obj, key, required);
  if (!url) return url;
  const std::string pointer = JoinPointer(obj, std::string(key));
  if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
    Error(pointer, std::string(key) + " must start with http:// or https://");
    return std::nullopt;
  }
  const size_t start = url->find("://") + 3;
  const std::string authority = url->substr(start, url->find_first_of("/?#", start) - start);
  if (authority.find('@') != std::string::npos) {
    Error(pointer, std::string(key) + " holds credentials (user:password@): URLs end up in logs and error messages; "
                   "put the secret in api_key or headers instead");
    return std::nullopt;
  }
  // The same for a secret in the query ("?api_key=..."): refused like credentials.
  if (const size_t q = url->find('?'); q != std::string::npos) {
    static const RE2 kSecret(R"((?i)(^|&)(api[_-]?key|key|token|access[_-]?token|secret|password|sig|signature)=)");
    if (RE2::PartialMatch(url->substr(q + 1), kSecret)) {
      Error(pointer, std::string(key) + " holds a secret in its query (api_key=, token=...): URLs end up in logs and "
                     "error messages; put the secret in api_key or headers instead");
      return std::nullopt;
    }
  }
  return url;
}

}  // namespace reins

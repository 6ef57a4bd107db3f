#include "policy/schema/schema_validator.h"

// valijson reports errors by throwing only when this is set; otherwise it prints and
// calls abort(). Nothing else in reins includes valijson, so the setting is uniform.
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

#include <re2/re2.h>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/constraint_builder.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <map>
#include <new>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string_view>

namespace reins {

struct SchemaValidator::Compiled {
  valijson::Schema schema;
  // patternProperties still runs through valijson's std::regex; see Validate.
  bool uses_pattern_properties = false;
};

namespace {

using valijson::adapters::Adapter;
using valijson::adapters::NlohmannJsonAdapter;

// valijson matches 'pattern' and 'format' with std::regex, whose backtracking
// executor recurses once per input character: a 100 KB string from the model
// overflows the stack. Both keywords are renamed to these and checked with RE2
// (linear time, no recursion) by the constraints below.
constexpr char kPatternKeyword[] = "reins-re2-pattern";
constexpr char kFormatKeyword[] = "reins-re2-format";
// valijson's multipleOf is replaced too; see MultipleOfConstraint.
constexpr char kMultipleOfKeyword[] = "reins-multiple-of";

// Validation recurses once per nesting level (recursive $refs, enum comparison);
// tool arguments never legitimately nest this deep.
constexpr int kMaxInstanceDepth = 128;
constexpr int kMaxSchemaDepth = 256;
// Property names are still matched against patternProperties with std::regex; this
// keeps that recursion shallow.
constexpr size_t kMaxPatternPropertyNameBytes = 256;

// JSON Schema patterns are ECMA 262; RE2 spells two common constructs differently:
// \uXXXX is \x{XXXX} and (?<name>...) is (?P<name>...). Lookarounds and
// backreferences have no RE2 form and fail to compile.
std::string EcmaToRe2(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'u' && i + 5 < pattern.size() &&
          std::all_of(pattern.begin() + i + 2, pattern.begin() + i + 6,
                      [](unsigned char h) { return std::isxdigit(h) != 0; })) {
        out += "\\x{" + pattern.substr(i + 2, 4) + "}";
        i += 5;
      } else {
        out += pattern.substr(i++, 2);
      }
    } else if (!in_class && pattern.compare(i, 3, "(?<") == 0 && i + 3 < pattern.size() &&
               pattern[i + 3] != '=' && pattern[i + 3] != '!') {
      out += "(?P<";
      i += 2;
    } else {
      in_class = c == '[' ? true : c == ']' ? false : in_class;
      out += c;
    }
  }
  return out;
}

std::shared_ptr<const RE2> CompileRe2(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(EcmaToRe2(pattern), options);
  if (!re->ok()) {
    throw std::runtime_error("'pattern' " + pattern + " is not supported: " + re->error());
  }
  return re;
}

// Gives a PolyConstraint the clone boilerplate valijson needs to copy it.
template <typename Derived>
class CloneablePoly : public valijson::constraints::PolyConstraint {
 private:
  Constraint* cloneInto(void* memory) const override {
    return new (memory) Derived(static_cast<const Derived&>(*this));
  }
  size_t sizeOf() const override { return sizeof(Derived); }
};

// 'pattern': an unanchored search, as JSON Schema specifies.
class Re2PatternConstraint final : public CloneablePoly<Re2PatternConstraint> {
 public:
  explicit Re2PatternConstraint(const std::string& pattern) : pattern_(pattern), re_(CompileRe2(pattern)) {}

  bool validate(const Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;
    if (RE2::PartialMatch(target.asString(), *re_)) return true;
    if (results) results->pushError(context, "String does not match pattern '" + pattern_ + "'.");
    return false;
  }

 private:
  std::string pattern_;
  std::shared_ptr<const RE2> re_;  // shared by valijson's copies of the constraint
};

// 'format': date, time and date-time are checked (RFC 3339, as valijson does, on RE2);
// other formats are annotations only, as draft 7 allows.
class Re2FormatConstraint final : public CloneablePoly<Re2FormatConstraint> {
 public:
  explicit Re2FormatConstraint(std::string format) : format_(std::move(format)) {}

  bool validate(const Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString() || Matches(target.asString())) return true;
    if (results) results->pushError(context, "String should be a valid " + format_ + ".");
    return false;
  }

 private:
  bool Matches(const std::string& s) const {
    static const RE2 kDate(R"(([0-9]{4})-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01]))");
    static const RE2 kTime(
        R"(([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))");
    int year = 0;
    int month = 0;
    int day = 0;
    if (format_ == "date") return RE2::FullMatch(s, kDate, &year, &month, &day) && DayFits(year, month, day);
    if (format_ == "time") return RE2::FullMatch(s, kTime);
    if (format_ == "date-time") {
      size_t t = s.find_first_of("Tt");
      return t != std::string::npos && RE2::FullMatch(s.substr(0, t), kDate, &year, &month, &day) &&
             DayFits(year, month, day) && RE2::FullMatch(s.substr(t + 1), kTime);
    }
    return true;
  }

  static bool DayFits(int year, int month, int day) {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  }

  std::string format_;
};

// 'multipleOf': valijson truncates 4.5 to 4 against an integer divisor (so 4.5 would
// be a multiple of 2), and casts huge doubles to int64 (undefined behaviour).
class MultipleOfConstraint final : public CloneablePoly<MultipleOfConstraint> {
 public:
  // `divisor` is a number > 0 (MultipleOfBuilder checks).
  explicit MultipleOfConstraint(const Adapter& divisor)
      : divisor_(divisor.getNumber()), int_divisor_(divisor.isInteger() ? divisor.getInteger() : 0) {}

  bool validate(const Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isNumber() || Divides(target)) return true;
    if (results) {
      Json divisor = int_divisor_ > 0 ? Json(int_divisor_) : Json(divisor_);
      results->pushError(context, "Value should be a multiple of " + divisor.dump() + ".");
    }
    return false;
  }

 private:
  bool Divides(const Adapter& target) const {
    // int_divisor_ is 0 for a fraction and negative for a uint64 past INT64_MAX.
    if (int_divisor_ > 0 && target.isInteger()) return target.getInteger() % int_divisor_ == 0;
    double quotient = target.getNumber() / divisor_;
    return std::isfinite(quotient) && std::abs(quotient - std::round(quotient)) < 1e-9;
  }

  double divisor_;
  std::int64_t int_divisor_;
};

class MultipleOfBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    if (!node.isNumber() || !(node.getNumber() > 0)) {
      throw std::runtime_error("'multipleOf' must be a number greater than 0");
    }
    return new MultipleOfConstraint(node);
  }
};

class Re2PatternBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    if (!node.isString()) throw std::runtime_error("'pattern' must be a string");
    return new Re2PatternConstraint(node.asString());
  }
};

class Re2FormatBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    if (!node.isString()) throw std::runtime_error("'format' must be a string");
    return new Re2FormatConstraint(node.asString());
  }
};

std::string WithoutFragment(const std::string& uri) { return uri.substr(0, uri.find('#')); }

// Enough of RFC 3986 for $id and $ref: "node" against "http://h/tree" is "http://h/node".
std::string Resolve(const std::string& base, const std::string& ref) {
  if (ref.empty() || ref[0] == '#') return WithoutFragment(base) + ref;
  if (ref.find("://") != std::string::npos || base.find("://") == std::string::npos) return ref;
  return base.substr(0, base.rfind('/') + 1) + ref;
}

// A key as a JSON Pointer token inside a URI fragment (valijson percent-decodes).
std::string PointerToken(const std::string& key) {
  std::string token;
  for (char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : c == '%' ? "%25" : std::string(1, c);
  return token;
}

// A $ref to a document the schema does not contain.
class RemoteRefError : public std::runtime_error {
 public:
  explicit RemoteRefError(const std::string& uri) : std::runtime_error(uri) {}
};

bool IsOneOf(std::string_view key, std::initializer_list<std::string_view> keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Values that are data, never schemas.
bool IsDataKeyword(std::string_view key) {
  return IsOneOf(key, {"enum", "const", "default", "examples", "required", "type", "$ref", "$id", "$schema",
                       "$comment", "title", "description"});
}

// Objects whose values are schemas (or, for dependencies, property lists).
bool IsSchemaMapKeyword(std::string_view key) {
  return IsOneOf(key, {"properties", "patternProperties", "definitions", "$defs", "dependencies"});
}

// Values that are a schema or an array of schemas.
bool IsSubschemaKeyword(std::string_view key) {
  return IsOneOf(key, {"items", "additionalItems", "additionalProperties", "contains", "propertyNames", "not",
                       "if", "then", "else", "allOf", "anyOf", "oneOf"});
}

bool IsArrayOf(const Json& value, bool (Json::*is)() const noexcept) {
  return value.is_array() && std::all_of(value.begin(), value.end(), [is](const Json& v) { return (v.*is)(); });
}

// valijson's own messages for these ("JSON value is not an array.") name no keyword.
void CheckShapes(const Json& node) {
  auto fail = [](std::string_view keyword, std::string_view shape) {
    throw std::runtime_error("'" + std::string(keyword) + "' must be " + std::string(shape));
  };
  if (auto t = node.find("type"); t != node.end() && !t->is_string() && !IsArrayOf(*t, &Json::is_string)) {
    fail("type", "a string or array");
  }
  if (auto r = node.find("required"); r != node.end() && !IsArrayOf(*r, &Json::is_string)) {
    fail("required", "an array of strings");
  }
  if (auto e = node.find("enum"); e != node.end() && !e->is_array()) fail("enum", "an array");
  for (std::string_view key : {"allOf", "anyOf", "oneOf"}) {
    if (auto it = node.find(key); it != node.end() && !it->is_array()) fail(key, "an array");
  }
  for (std::string_view key : {"properties", "patternProperties", "definitions", "dependencies"}) {
    if (auto it = node.find(key); it != node.end() && !it->is_object()) fail(key, "an object");
  }
}

// Rewrites a schema before valijson sees it:
// - 'pattern', 'format' and 'multipleOf' move to the keywords of our constraints;
// - every $ref into the document (including parts with their own $id) becomes a
//   pointer from the root: valijson 1.0 reads scope from draft 4's 'id', joins relative
//   URIs by concatenation and caches embedded documents under the wrong key; a $ref
//   anywhere else throws RemoteRefError;
// - malformed keywords are refused with a message that names them, and bad
//   patternProperties regexes here rather than at validation time.
class SchemaPreparer {
 public:
  void Prepare(Json& root) {
    if (!root.is_object() && !root.is_boolean()) throw std::runtime_error("must be an object or a boolean");
    Walk(root, {}, [this](Json& node, const Position& at) {
      if (auto id = node.find("$id"); id != node.end() && id->is_string() && !node.contains("$ref")) {
        std::string uri = Resolve(at.base, id->get<std::string>());
        resources_[uri.ends_with('#') ? WithoutFragment(uri) : uri] = at.pointer;  // "#foo" is an anchor
      }
    });
    resources_.try_emplace("", "");
    Walk(root, {}, [this](Json& node, const Position& at) { Rewrite(node, at); });
    std::set<const Json*> done;
    Walk(root, {}, [&](Json& node, const Position&) { CheckInPlaceCycles(root, node, done); });
  }
  bool uses_pattern_properties() const { return uses_pattern_properties_; }

 private:
  struct Position {
    std::string base;     // URI that relative $id and $ref resolve against
    std::string pointer;  // JSON Pointer from the root
    bool known = true;    // false under keywords draft 7 does not define
  };
  using Visitor = std::function<void(Json& node, const Position& at)>;

  static Position Child(const Position& at, const std::string& key, bool known) {
    return {at.base, at.pointer + "/" + PointerToken(key), at.known && known};
  }

  // Calls `visit` on every schema object, children first. Unknown keywords are walked
  // as schemas too: a $ref may point into them. Recursion is bounded by FindHazard.
  void Walk(Json& node, Position at, const Visitor& visit) {
    if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) Walk(node[i], Child(at, std::to_string(i), true), visit);
      return;
    }
    if (!node.is_object()) return;
    if (auto id = node.find("$id"); id != node.end() && id->is_string() && !node.contains("$ref")) {
      at.base = WithoutFragment(Resolve(at.base, id->get<std::string>()));
    }
    for (auto& [key, value] : node.items()) {
      if (IsDataKeyword(key)) continue;
      if (IsSchemaMapKeyword(key) && value.is_object()) {
        if (key == "patternProperties") CheckPatternProperties(value);
        Position map = Child(at, key, true);
        for (auto& [name, schema] : value.items()) Walk(schema, Child(map, name, true), visit);
      } else {
        Walk(value, Child(at, key, IsSubschemaKeyword(key)), visit);
      }
    }
    visit(node, at);
  }

  void Rewrite(Json& node, const Position& at) {
    if (at.known) CheckShapes(node);
    Rename(node, "pattern", kPatternKeyword);
    Rename(node, "format", kFormatKeyword);
    Rename(node, "multipleOf", kMultipleOfKeyword);
    node.erase("id");  // not a draft 7 keyword, but valijson would take it as the scope
    auto ref = node.find("$ref");
    if (ref == node.end() || !ref->is_string()) return;
    const std::string uri = Resolve(at.base, ref->get<std::string>());
    const std::string document = WithoutFragment(uri);
    const std::string fragment = uri.substr(document.size());  // "", "#", "#/a/b" or "#anchor"
    const bool is_pointer = fragment.size() > 1 && fragment[1] == '/';
    auto resource = resources_.find(fragment.size() > 1 && !is_pointer ? uri : document);
    if (resource != resources_.end()) {
      *ref = "#" + resource->second + (is_pointer ? fragment.substr(1) : "");
    } else if (at.known) {
      throw RemoteRefError(uri);
    }
  }

  // A loop of keywords that apply to the same value ({"anyOf": [{"$ref": "#"}]})
  // makes valijson recurse forever, when parsing or when validating. Depth-first
  // search without recursion; `done` holds nodes known to start no loop.
  static void CheckInPlaceCycles(const Json& root, const Json& start, std::set<const Json*>& done) {
    struct Frame {
      const Json* node;
      std::vector<const Json*> next;
    };
    std::set<const Json*> on_path = {&start};
    std::vector<Frame> stack = {{&start, InPlaceSubschemas(root, start)}};
    while (!stack.empty()) {
      if (stack.back().next.empty()) {
        on_path.erase(stack.back().node);
        done.insert(stack.back().node);
        stack.pop_back();
        continue;
      }
      const Json* child = stack.back().next.back();
      stack.back().next.pop_back();
      if (on_path.contains(child)) throw std::runtime_error("$ref loop that never descends into the value");
      if (done.contains(child)) continue;
      on_path.insert(child);
      stack.push_back({child, InPlaceSubschemas(root, *child)});
    }
  }

  // The subschemas applied to the same value as `node` (draft 7 ignores siblings of $ref).
  static std::vector<const Json*> InPlaceSubschemas(const Json& root, const Json& node) {
    std::vector<const Json*> out;
    if (!node.is_object()) return out;
    if (auto ref = node.find("$ref"); ref != node.end()) {
      if (const Json* target = Dereference(root, *ref)) out.push_back(target);
      return out;
    }
    for (const char* key : {"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependencies"}) {
      auto it = node.find(key);
      if (it == node.end()) continue;
      if (it->is_array() || (it->is_object() && std::string_view(key) == "dependencies")) {
        for (const Json& schema : *it) out.push_back(&schema);
      } else {
        out.push_back(&*it);
      }
    }
    return out;
  }

  // The node a rewritten "#/pointer" $ref names, or null.
  static const Json* Dereference(const Json& root, const Json& ref) {
    if (!ref.is_string() || !ref.get<std::string>().starts_with("#")) return nullptr;
    std::string pointer;
    const std::string text = ref.get<std::string>().substr(1);
    for (size_t i = 0; i < text.size(); ++i) {  // percent-decoding, as valijson does
      if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
        pointer += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        pointer += text[i];
      }
    }
    try {
      Json::json_pointer path(pointer);
      return root.contains(path) ? &root.at(path) : nullptr;
    } catch (const std::exception&) {
      return nullptr;  // valijson reports the bad pointer
    }
  }

  void CheckPatternProperties(const Json& map) {
    uses_pattern_properties_ = true;
    for (const auto& [pattern, unused] : map.items()) {
      try {
        std::regex compiled(pattern);
      } catch (const std::regex_error&) {
        throw std::runtime_error("patternProperties key '" + pattern + "' is not a valid regular expression");
      }
    }
  }

  static void Rename(Json& node, const char* from, const char* to) {
    if (auto it = node.find(from); it != node.end()) {
      Json value = std::move(*it);
      node.erase(it);
      node[to] = std::move(value);
    }
  }

  bool uses_pattern_properties_ = false;
  std::map<std::string, std::string> resources_;  // base URI or "URI#anchor" -> JSON Pointer
};

// Looks for what would make validation recurse too deep (copies and comparisons of
// nlohmann values recurse too) or run std::regex on a long property name. Iterative,
// so it is safe on any input.
std::optional<std::string> FindHazard(const Json& root, int max_depth, bool limit_property_names) {
  std::vector<std::pair<const Json*, int>> stack = {{&root, 1}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > max_depth) return "nests deeper than " + std::to_string(max_depth) + " levels";
    if (node->is_object()) {
      for (const auto& [key, value] : node->items()) {
        if (limit_property_names && key.size() > kMaxPatternPropertyNameBytes) {
          return "has a property name longer than " + std::to_string(kMaxPatternPropertyNameBytes) + " bytes";
        }
        stack.emplace_back(&value, depth + 1);
      }
    } else if (node->is_array()) {
      for (const Json& element : *node) stack.emplace_back(&element, depth + 1);
    }
  }
  return std::nullopt;
}

// Draft 6+ says 1.0 is an integer; valijson's strict mode says it is not, and its weak
// mode would accept "1" as a number. Integral floats in int64 range become integers.
void IntegralFloatsToIntegers(Json& root) {
  std::vector<Json*> stack = {&root};
  while (!stack.empty()) {
    Json* node = stack.back();
    stack.pop_back();
    if (node->is_number_float()) {
      double d = node->get<double>();
      if (std::trunc(d) == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        *node = static_cast<std::int64_t>(d);
      }
    } else if (node->is_structured()) {
      for (Json& child : *node) stack.push_back(&child);
    }
  }
}

// valijson context ["<root>", "[to]", "[0]"] -> "/to/0" (JSON Pointer escaping).
std::string PathOf(const std::vector<std::string>& context) {
  std::string path;
  for (size_t i = 1; i < context.size(); ++i) {
    std::string_view part = context[i];
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') part = part.substr(1, part.size() - 2);
    path += '/';
    for (char c : part) path += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return path.empty() ? "(root)" : path;
}

// "Failed to validate item #2" and friends only restate the errors below them.
bool IsSummary(const std::string& description) {
  return description.starts_with("Failed to validate item #") ||
         description.starts_with("Failed to validate against schema associated with") ||
         description.starts_with("Failed to validate against additional properties schema");
}

std::vector<std::string> Describe(const valijson::ValidationResults& results) {
  bool has_detail = false;
  for (const auto& error : results) has_detail = has_detail || !IsSummary(error.description);
  std::vector<std::string> lines;
  for (const auto& error : results) {
    if (has_detail && IsSummary(error.description)) continue;
    std::string line = PathOf(error.context) + ": " + error.description;
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  }
  if (lines.empty()) lines.push_back("(root): value does not match the schema");
  return lines;
}

}  // namespace

Result<SchemaValidator> SchemaValidator::Compile(const Json& schema) {
  std::string refused_uri;
  try {
    if (auto hazard = FindHazard(schema, kMaxSchemaDepth, false)) throw std::runtime_error(*hazard);
    Json prepared = schema;
    SchemaPreparer preparer;
    preparer.Prepare(prepared);

    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    parser.addConstraintBuilder(kPatternKeyword, new Re2PatternBuilder());
    parser.addConstraintBuilder(kFormatKeyword, new Re2FormatBuilder());
    parser.addConstraintBuilder(kMultipleOfKeyword, new MultipleOfBuilder());
    // The preparer turned every $ref into a local pointer, so valijson never fetches;
    // the fetcher refuses anyway, should it ask.
    auto fetch = [&](const std::string& uri) -> const Json* {
      refused_uri = uri;
      return nullptr;
    };
    auto release = [](const Json* document) { delete document; };
    auto compiled = std::make_shared<Compiled>();
    compiled->uses_pattern_properties = preparer.uses_pattern_properties();
    parser.populateSchema(NlohmannJsonAdapter(prepared), compiled->schema, fetch, release);
    return SchemaValidator(std::move(compiled));
  } catch (const RemoteRefError& e) {
    return InvalidArgument(std::string("remote $ref is not supported: ") + e.what());
  } catch (const std::exception& e) {
    if (!refused_uri.empty()) return InvalidArgument("remote $ref is not supported: " + refused_uri);
    return InvalidArgument(std::string("schema: ") + e.what());
  }
}

std::vector<std::string> SchemaValidator::Validate(const Json& instance) const {
  try {
    if (auto hazard = FindHazard(instance, kMaxInstanceDepth, compiled_->uses_pattern_properties)) {
      return {"(root): value " + *hazard};
    }
    Json normalized = instance;
    IntegralFloatsToIntegers(normalized);
    // One valijson::Validator per call: its regex cache is mutable and unsynchronized.
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::ValidationResults results;
    if (validator.validate(compiled_->schema, NlohmannJsonAdapter(normalized), &results)) return {};
    return Describe(results);
  } catch (const std::exception& e) {
    return {std::string("(root): the value could not be checked: ") + e.what()};
  }
}

}  // namespace reins

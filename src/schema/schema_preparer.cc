// The schema and value preparation declared in schema_preparer.h: SchemaPreparer
// ($id/$ref resolution, shape checks, keyword renaming, $ref loop detection), the
// depth and property-name hazard scan, and integral-float normalization. All of it
// works on nlohmann values only; valijson is not included here.
#include "schema/schema_preparer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "domain/text.h"
#include "schema/schema_constraints.h"

namespace reins::schema_internal {

namespace {

// Property names reach valijson's std::regex only inside literal alternations (see
// PinPatternProperties); this keeps those short.
constexpr size_t kMaxPatternPropertyNameBytes = 256;

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

// A "#..." $ref's JSON Pointer, percent-decoded as valijson reads it.
std::string RefPointer(const std::string& ref) { return ref.empty() ? "" : PercentDecoded(std::string_view(ref).substr(1)); }

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
  return value.is_array() &&
         std::all_of(value.begin(), value.end(), [is](const Json& v) { return (v.*is)(); });
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
    const std::string pointer = RefPointer(ref.get<std::string>());
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
        (void)CompileRe2(pattern);
      } catch (const std::runtime_error& e) {
        throw std::runtime_error("patternProperties key '" + pattern + "' is not a supported regular expression");
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

}  // namespace

namespace {

// An ECMA 262 regex matching exactly the names in `names`, bytes spelled \xHH so that
// nothing in a name is syntax; `unique` empty groups keep two such keys apart.
std::string LiteralAlternation(const std::vector<std::string>& names, size_t unique) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string re = names.empty() ? "(?!)" : "^(?:";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) re += '|';
    for (unsigned char c : names[i]) {
      if (std::isalnum(c) != 0) {
        re += static_cast<char>(c);
      } else {
        re += "\\x";
        re += kHex[c >> 4];
        re += kHex[c & 15];
      }
    }
  }
  if (!names.empty()) re += ")$";
  for (size_t i = 0; i < unique; ++i) re += "(?:)";
  return re;
}

// A key as a JSON Pointer token (RFC 6901 escapes only).
std::string PlainToken(const std::string& key) {
  std::string token;
  for (char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return token;
}

// Rewrites every "$ref" that points at or below `from` (a pointer) to `to`.
void MoveRefs(Json& root, const std::string& from, const std::string& to) {
  std::vector<Json*> stack = {&root};
  while (!stack.empty()) {
    Json* n = stack.back();
    stack.pop_back();
    if (!n->is_structured()) continue;
    for (Json& child : *n) stack.push_back(&child);
    auto ref = n->find("$ref");
    if (!n->is_object() || ref == n->end() || !ref->is_string() || !ref->get<std::string>().starts_with("#")) continue;
    const std::string pointer = RefPointer(ref->get<std::string>());
    if (pointer.starts_with(from) && (pointer.size() == from.size() || pointer[from.size()] == '/')) {
      std::string moved = "#";
      for (char c : to + pointer.substr(from.size())) moved += c == '%' ? std::string("%25") : std::string(1, c);
      *ref = moved;
    }
  }
}

}  // namespace

Json PinPatternProperties(const Json& prepared, const std::set<std::string>& names) {
  Json out = prepared;
  // (pointer of the map, old key, new key) for every key renamed, applied to $refs after.
  std::vector<std::tuple<std::string, std::string, std::string>> moved;
  std::vector<std::pair<Json*, std::string>> stack = {{&out, ""}};
  while (!stack.empty()) {
    auto [node, pointer] = stack.back();
    stack.pop_back();
    if (node->is_array()) {
      for (size_t i = 0; i < node->size(); ++i) stack.emplace_back(&(*node)[i], pointer + "/" + std::to_string(i));
      continue;
    }
    if (!node->is_object()) continue;
    if (auto map = node->find("patternProperties"); map != node->end() && map->is_object()) {
      Json pinned = Json::object();
      for (auto& [pattern, schema] : map->items()) {
        std::shared_ptr<const RE2> re = CompileRe2(pattern);
        std::vector<std::string> matching;
        for (const std::string& name : names) {
          if (RE2::PartialMatch(name, *re)) matching.push_back(name);
        }
        std::string key = LiteralAlternation(matching, 0);
        for (size_t unique = 1; pinned.contains(key); ++unique) key = LiteralAlternation(matching, unique);
        const std::string base = pointer + "/patternProperties/";
        moved.emplace_back(base + PlainToken(pattern), pattern, base + PlainToken(key));
        pinned[key] = std::move(schema);
      }
      *map = std::move(pinned);
    }
    for (auto& [key, value] : node->items()) {
      if (!IsDataKeyword(key)) stack.emplace_back(&value, pointer + "/" + PlainToken(key));
    }
  }
  for (const auto& [from, pattern, to] : moved) {
    if (from != to) MoveRefs(out, from, to);
  }
  return out;
}

bool PrepareSchema(Json& root) {
  SchemaPreparer preparer;
  preparer.Prepare(root);
  return preparer.uses_pattern_properties();
}

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
namespace {

bool IsIntegral(double d) { return std::trunc(d) == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0; }

}  // namespace

bool HasIntegralFloat(const Json& root) {
  if (root.is_number_float()) return IsIntegral(root.get<double>());
  if (root.is_object()) {
    for (const auto& [name, value] : root.get_ref<const Json::object_t&>()) {
      if (HasIntegralFloat(value)) return true;
    }
  } else if (root.is_array()) {
    for (const Json& item : root.get_ref<const Json::array_t&>()) {
      if (HasIntegralFloat(item)) return true;
    }
  }
  return false;
}

void IntegralFloatsToIntegers(Json& root) {
  std::vector<Json*> stack = {&root};
  while (!stack.empty()) {
    Json* node = stack.back();
    stack.pop_back();
    if (node->is_number_float()) {
      double d = node->get<double>();
      if (IsIntegral(d)) *node = static_cast<std::int64_t>(d);
    } else if (node->is_structured()) {
      for (Json& child : *node) stack.push_back(&child);
    }
  }
}

}  // namespace reins::schema_internal

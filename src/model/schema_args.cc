#include "model/schema_args.h"

#include <algorithm>

namespace reins {
namespace {

std::string TypeOf(const Json& schema) {
  if (auto it = schema.find("type"); it != schema.end()) {
    if (it->is_string()) return it->get<std::string>();
    if (it->is_array() && !it->empty() && (*it)[0].is_string()) return (*it)[0].get<std::string>();
  }
  if (schema.contains("properties")) return "object";
  if (schema.contains("items")) return "array";
  return "string";
}

// A schema's size keyword as a count, clamped: a schema (an MCP server's, say) may ask
// for a billion items or hold a string where a number belongs.
size_t Count(const Json& schema, const char* key, size_t fallback, size_t most) {
  auto it = schema.find(key);
  if (it == schema.end() || !it->is_number() || it->get<double>() < 0) return fallback;
  return static_cast<size_t>(std::min(it->get<double>(), static_cast<double>(most)));
}

std::string Fit(std::string text, const Json& schema) {
  size_t max = Count(schema, "maxLength", 200, 200);
  size_t min = std::min(Count(schema, "minLength", 0, 4096), max);
  if (text.size() > max) text.resize(max);
  while (text.size() < min) text += "x";
  return text;
}

Json Sample(const Json& schema, const std::string& name, const ArgHints& hints, std::mt19937_64& rng, int depth) {
  if (!schema.is_object()) return nullptr;
  if (auto it = schema.find("const"); it != schema.end()) return *it;
  if (auto it = schema.find("enum"); it != schema.end() && it->is_array() && !it->empty()) {
    for (const std::string& want : hints.preferred) {
      for (const Json& v : *it) {
        if (v == want) return v;
      }
    }
    return (*it)[rng() % it->size()];
  }
  std::string type = TypeOf(schema);
  if (type == "object") {
    Json out = Json::object();
    if (depth > 4) return out;
    auto required = schema.find("required");
    auto properties = schema.find("properties");
    if (required == schema.end() || !required->is_array() || properties == schema.end() || !properties->is_object()) {
      return out;
    }
    for (const auto& [prop, sub] : properties->items()) {
      if (std::find(required->begin(), required->end(), Json(prop)) == required->end()) continue;  // plausible: what is needed
      out[prop] = Sample(sub, prop, hints, rng, depth + 1);
    }
    return out;
  }
  if (type == "array") {
    Json out = Json::array();
    size_t n = std::min(std::max<size_t>(1, Count(schema, "minItems", 0, 8)), Count(schema, "maxItems", 8, 8));
    const Json items = schema.contains("items") ? schema["items"] : Json::object();
    for (size_t i = 0; i < n && depth <= 4; ++i) out.push_back(Sample(items, name, hints, rng, depth + 1));
    return out;
  }
  if (type == "integer" || type == "number") {
    auto number = [&](const char* key, double fallback) {
      auto it = schema.find(key);
      return it != schema.end() && it->is_number() ? it->get<double>() : fallback;
    };
    double lo = std::clamp(number("minimum", 1.0), -1e15, 1e15);
    double hi = std::clamp(number("maximum", lo + 9.0), lo, 1e15);
    long v = static_cast<long>(lo) + static_cast<long>(rng() % static_cast<uint64_t>(std::max(1.0, hi - lo + 1)));
    return type == "integer" ? Json(v) : Json(static_cast<double>(v));
  }
  if (type == "boolean") return false;
  if (type == "null") return nullptr;
  if (IsIdName(name) && !hints.known_ids.empty()) return Fit(hints.known_ids.front(), schema);
  if (IsIdName(name)) return Fit(name + "_1", schema);
  return Fit(hints.user_text.empty() ? name : hints.user_text, schema);
}

}  // namespace

bool IsIdName(const std::string& name) {
  if (name == "id") return true;
  if (name.size() > 3 && name.compare(name.size() - 3, 3, "_id") == 0) return true;
  return name.size() > 2 && name.compare(name.size() - 2, 2, "Id") == 0;
}

Json SampleArgs(const Json& schema, const ArgHints& hints, std::mt19937_64& rng) {
  Json out = Sample(schema, "", hints, rng, 0);
  return out.is_object() ? out : Json::object();
}

bool BreakArgs(const Json& schema, Json& args, std::mt19937_64& rng) {
  if (!schema.is_object() || !args.is_object()) return false;
  std::vector<int> ways = {0, 1, 2};
  std::shuffle(ways.begin(), ways.end(), rng);
  const Json properties = schema.value("properties", Json::object());
  for (int way : ways) {
    if (way == 0) {  // drop a required property
      for (const Json& r : schema.value("required", Json::array())) {
        if (r.is_string() && args.contains(r.get<std::string>())) {
          args.erase(r.get<std::string>());
          return true;
        }
      }
    } else if (way == 1) {  // the wrong type for a typed property
      for (auto& [prop, value] : args.items()) {
        if (!properties.contains(prop) || !properties[prop].contains("type")) continue;
        std::string type = TypeOf(properties[prop]);
        value = type == "string" ? Json(12345) : Json("not a " + type);
        return true;
      }
    } else if (auto it = schema.find("additionalProperties"); it != schema.end() && *it == false) {  // a property nobody asked for
      args["unexpected_field"] = true;
      return true;
    }
  }
  return false;
}

}  // namespace reins

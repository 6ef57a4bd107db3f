// The JSON value type used across reins: tool arguments, tool results, trace data.
// nlohmann::json is the one heavy header the public domain types accept, because JSON
// values *are* the domain here (arguments, envelopes, verdicts). YAML, SQLite and Beast
// stay inside src/.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace reins {
using Json = nlohmann::json;

namespace json_detail {
inline void AddMembers(Json::object_t&) {}
template <typename Value, typename... Rest>
void AddMembers(Json::object_t& object, std::string_view key, Value&& value, Rest&&... rest) {
  object.emplace(std::string(key), std::forward<Value>(value));
  AddMembers(object, std::forward<Rest>(rest)...);
}
}  // namespace json_detail

// An object from key, value, key, value...: JsonObject("name", t.name, "args", t.args).
// The same value as Json{{"name", t.name}, {"args", t.args}}, for code that runs on every
// turn: an initializer list builds each member as a two-element array first (a key
// string, a value and an array allocated, copied and freed per member); this constructs
// each member once, in place. As with the list, the first of two equal keys stays.
template <typename... KeysAndValues>
Json JsonObject(KeysAndValues&&... members) {
  static_assert(sizeof...(members) % 2 == 0, "JsonObject takes keys and values in pairs");
  Json object(Json::value_t::object);
  json_detail::AddMembers(object.get_ref<Json::object_t&>(), std::forward<KeysAndValues>(members)...);
  return object;
}

}  // namespace reins

#include "domain/json_path.h"

#include <cctype>

namespace reins {
namespace {

Status Bad(const std::string& text, size_t pos, const std::string& why) {
  return InvalidArgument("JSONPath '" + text + "' at character " + std::to_string(pos + 1) + ": " + why +
                         " (supported: $, .key, [*], [N])");
}

bool IsKeyChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

}  // namespace

Result<JsonPath> JsonPath::Parse(const std::string& text) {
  JsonPath path;
  path.text_ = text;
  if (text.empty() || text[0] != '$') return Bad(text, 0, "must start with $");
  size_t i = 1;
  while (i < text.size()) {
    if (text[i] == '.') {
      size_t start = ++i;
      while (i < text.size() && IsKeyChar(text[i])) ++i;
      if (i == start) return Bad(text, start, "expected a key after '.'");
      path.steps_.emplace_back(text.substr(start, i - start));
    } else if (text[i] == '[') {
      size_t close = text.find(']', i);
      if (close == std::string::npos) return Bad(text, i, "unclosed '['");
      std::string inner = text.substr(i + 1, close - i - 1);
      if (inner == "*") {
        path.steps_.emplace_back(Wildcard{});
      } else if (!inner.empty() && inner.size() < 10 &&
                 inner.find_first_not_of("0123456789") == std::string::npos) {
        path.steps_.emplace_back(static_cast<size_t>(std::stoul(inner)));
      } else {
        return Bad(text, i + 1, "expected * or an index inside []");
      }
      i = close + 1;
    } else {
      return Bad(text, i, std::string("unexpected '") + text[i] + "'");
    }
  }
  return path;
}

Result<JsonPath> JsonPath::ParseArgument(const std::string& text) {
  if (text.starts_with('$')) return Parse(text);
  if (text.empty()) return InvalidArgument("an argument's name is empty");
  JsonPath path;
  path.text_ = text;
  path.steps_.emplace_back(text);
  return path;
}

const Json* JsonPath::InSchema(const Json& schema) const {
  const Json* node = &schema;
  for (const Step& step : steps_) {
    const char* via = std::holds_alternative<std::string>(step) ? "properties" : "items";
    auto it = node->find(via);  // end() for a value that is no object
    if (it == node->end()) return nullptr;
    node = &*it;
    if (const auto* key = std::get_if<std::string>(&step)) {
      auto member = node->find(*key);
      if (member == node->end()) return nullptr;
      node = &*member;
    }
  }
  return node;
}

std::vector<const Json*> JsonPath::Select(const Json& root) const {
  std::vector<const Json*> current = {&root};
  for (const Step& step : steps_) {
    std::vector<const Json*> next;
    for (const Json* node : current) {
      if (const auto* key = std::get_if<std::string>(&step)) {
        if (node->is_object()) {
          if (auto it = node->find(*key); it != node->end()) next.push_back(&*it);
        }
      } else if (const auto* index = std::get_if<size_t>(&step)) {
        if (node->is_array() && *index < node->size()) next.push_back(&(*node)[*index]);
      } else if (node->is_array()) {
        for (const Json& item : *node) next.push_back(&item);
      } else if (node->is_object()) {
        for (const Json& item : *node) next.push_back(&item);
      }
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace reins

#include "policy/approval/approval_words.h"

#include <algorithm>

#include "domain/text.h"

namespace reins {

std::string ArgLabel(const ToolDef& tool, const std::string& arg) {
  const Json& props = tool.input_schema.contains("properties") ? tool.input_schema["properties"] : Json::object();
  if (auto it = props.find(arg); it != props.end() && it->is_object() && it->contains("title") && (*it)["title"].is_string()) {
    return (*it)["title"].get<std::string>();
  }
  std::string label = arg;
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

std::string ValueWords(const Json& value) {
  if (value.is_string()) return "\u201c" + Clipped(value.get<std::string>(), 80) + "\u201d";
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_null()) return "none";
  if (value.is_array()) {
    std::string out;
    for (const Json& v : value) out += (out.empty() ? "" : ", ") + ValueWords(v);
    return out.empty() ? "none" : out;
  }
  if (value.is_object()) {
    std::string out;
    for (const auto& [k, v] : value.items()) {
      std::string key = k;
      std::replace(key.begin(), key.end(), '_', ' ');
      out += (out.empty() ? "" : ", ") + key + " " + ValueWords(v);
    }
    return out.empty() ? "none" : "(" + out + ")";
  }
  return value.dump();
}

std::string ArgsInWords(const ToolDef& tool, const Json& args) {
  if (!args.is_object()) return "";
  std::string out;
  for (const auto& [arg, value] : args.items()) out += (out.empty() ? "" : ", ") + ArgLabel(tool, arg) + " " + ValueWords(value);
  return out;
}

}  // namespace reins

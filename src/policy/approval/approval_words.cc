#include "policy/approval/approval_words.h"

#include "domain/text.h"

namespace reins {

std::string ArgLabel(const ToolDef& tool, const std::string& arg) {
  const Json* property = &tool.input_schema;
  for (const std::string& key : {std::string("properties"), arg, std::string("title")}) {
    auto it = property->find(key);  // end() for a value that is no object
    if (it == property->end()) return DefaultToolTitle(arg);  // a name's rule: spaces for '_'
    property = &*it;
  }
  return property->is_string() ? property->get<std::string>() : DefaultToolTitle(arg);
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
    for (const auto& [k, v] : value.items()) out += (out.empty() ? "" : ", ") + DefaultToolTitle(k) + " " + ValueWords(v);
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

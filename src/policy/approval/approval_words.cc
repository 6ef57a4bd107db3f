#include "policy/approval/approval_words.h"

#include "domain/text.h"

namespace reins {

std::optional<std::string> ArgTitle(const ToolDef& tool, const std::string& arg) {
  const Json* node = &tool.input_schema;
  for (const std::string& key : {std::string("properties"), arg, std::string("title")}) {
    auto it = node->find(key);  // end() for a value that is no object
    if (it == node->end()) return std::nullopt;
    node = &*it;
  }
  return node->is_string() ? std::optional<std::string>(node->get<std::string>()) : std::nullopt;
}

std::string ArgLabel(const ToolDef& tool, const std::string& arg) {
  return ArgTitle(tool, arg).value_or(DefaultToolTitle(arg));  // a name's rule: spaces for '_'
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

std::string CallInWords(const ToolDef& tool, const Json& args) {
  const std::string words = ArgsInWords(tool, args);
  return "\u201c" + tool.title + "\u201d" + (words.empty() ? "" : " (" + words + ")");
}

std::string ApprovalQuestion(const ToolDef& tool, const Json& args) {
  return "Should I go ahead with " + CallInWords(tool, args) + "? (approve or deny)";
}

}  // namespace reins

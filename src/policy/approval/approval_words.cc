#include "policy/approval/approval_words.h"

#include "domain/json_path.h"
#include "domain/text.h"
#include "turn/session_state.h"

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

namespace {

// A string as the person knows it: the title its clarification option gave it, else itself.
const std::string& Named(const std::string& value, const EntityLedger* ids) {
  const std::string* title = ids != nullptr ? ids->TitleOf(value) : nullptr;
  return title != nullptr ? *title : value;
}

}  // namespace

std::string ValueWords(const Json& value, const EntityLedger* ids) {
  if (value.is_string()) return "\u201c" + Clipped(Named(value.get_ref<const std::string&>(), ids), 80) + "\u201d";
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_null()) return "none";
  if (value.is_array()) {
    std::string out;
    for (const Json& v : value) out += (out.empty() ? "" : ", ") + ValueWords(v, ids);
    return out.empty() ? "none" : out;
  }
  if (value.is_object()) {
    std::string out;
    for (const auto& [k, v] : value.items()) out += (out.empty() ? "" : ", ") + DefaultToolTitle(k) + " " + ValueWords(v, ids);
    return out.empty() ? "none" : "(" + out + ")";
  }
  return value.dump();
}

std::string ArgsInWords(const ToolDef& tool, const Json& args, const EntityLedger* ids) {
  if (!args.is_object()) return "";
  std::string out;
  for (const auto& [arg, value] : args.items()) {
    out += (out.empty() ? "" : ", ") + ArgLabel(tool, arg) + " " + ValueWords(value, ids);
  }
  return out;
}

std::string CallInWords(const ToolDef& tool, const Json& args, const EntityLedger* ids) {
  const std::string words = ArgsInWords(tool, args, ids);
  return "\u201c" + tool.title + "\u201d" + (words.empty() ? "" : " (" + words + ")");
}

std::string ApprovalQuestion(const ToolDef& tool, const Json& args, const EntityLedger* ids) {
  return "Should I go ahead with " + CallInWords(tool, args, ids) + "? (approve or deny)";
}

std::string RulePrompt(const ToolDef& tool, const Json& args, const EntityLedger* ids) {
  if (tool.approval.prompt.empty()) return ApprovalQuestion(tool, args, ids);
  return FillPlaceholders(tool.approval.prompt, [&](const std::string& name) -> std::string {
    auto path = JsonPath::ParseArgument(name);
    if (!path.ok()) return "";
    std::string words;
    for (const Json* v : path->Select(args)) {
      words += words.empty() ? "" : ", ";
      words += v->is_string() ? Clipped(Named(v->get_ref<const std::string&>(), ids), 80) : ValueWords(*v, ids);
    }
    return words.empty() ? "(none)" : words;
  });
}

std::string ConditionsInWords(const ToolDef& tool) {
  std::string out;
  for (const ApprovalCondition& c : tool.approval.when) {
    std::string op;
    switch (c.op) {
      case ConditionOp::kGt: op = "above"; break;
      case ConditionOp::kGe: op = "at least"; break;
      case ConditionOp::kLt: op = "below"; break;
      case ConditionOp::kLe: op = "at most"; break;
      case ConditionOp::kEq: op = "is"; break;
      case ConditionOp::kNe: op = "is not"; break;
      case ConditionOp::kIn: op = "one of"; break;
      case ConditionOp::kMatches: op = "matching"; break;
    }
    const std::string label = c.path.starts_with("$") ? c.path : ArgLabel(tool, c.path);
    const std::string operand = c.op == ConditionOp::kMatches ? "/" + c.operand.get<std::string>() + "/" : ValueWords(c.operand);
    out += (out.empty() ? "" : " and ") + label + " " + op + " " + operand;
  }
  return out;
}

}  // namespace reins

// A tool's `approval:` (docs/human-in-the-loop.md): `required`, `none`, or the long form
// {required, when, prompt, approvers, ttl_s, allow_edit, remember}; and what `reins
// check` holds a rule to against the tool's input schema.
#include "config/agent_config_loader.h"
#include "domain/json_path.h"
#include "domain/text.h"

namespace reins {
namespace {

std::string P(const std::string& base, std::string_view key) { return JoinPointer(base, std::string(key)); }

// One argument's conditions: {gt: 90} or several, {ge: 10, lt: 100}.
void ParseConditions(ConfigReader& r, const std::string& cp, const std::string& path, ApprovalRule* out) {
  if (!r.Mapping(cp, {"gt", "ge", "lt", "le", "eq", "ne", "in", "matches"}, "condition")) return;
  if (auto parsed = JsonPath::ParseArgument(path); !parsed.ok()) return r.Error(cp, parsed.status().message());
  for (const auto& [name, operand] : r.Get(cp)->items()) {
    const std::optional<ConditionOp> known = kConditionOps.Parse(name);
    if (!known) continue;  // Mapping reported it
    const ConditionOp op = *known;
    const std::string op_ptr = P(cp, name);
    switch (op) {
      case ConditionOp::kGt: case ConditionOp::kGe: case ConditionOp::kLt: case ConditionOp::kLe:
        if (!operand.is_number()) r.Error(op_ptr, "'" + name + "' compares numbers, got " + DescribeType(operand));
        break;
      case ConditionOp::kEq: case ConditionOp::kNe:
        if (operand.is_object() || operand.is_array()) {
          r.Error(op_ptr, "'" + name + "' compares with one value (a string, number, true, false or null)");
        }
        break;
      case ConditionOp::kIn:
        if (!operand.is_array() || operand.empty()) r.Error(op_ptr, "'in' takes a non-empty list of values");
        break;
      case ConditionOp::kMatches:
        if (!operand.is_string()) {
          r.Error(op_ptr, "'matches' takes a regular expression (RE2), got " + DescribeType(operand));
        } else {
          r.CheckRegex(op_ptr, operand.get<std::string>());
        }
        break;
    }
    out->when.push_back({path, op, operand});
  }
}

void ParseApprovers(ConfigReader& r, const std::string& ap, ApprovalRule* out) {
  std::optional<std::vector<std::string>> approvers = r.StringList(ap, "approvers");
  if (!approvers) return;
  if (approvers->empty()) r.FieldError(ap, "approvers", "approvers must name someone (requester, any, a speaker or role:NAME)");
  for (size_t i = 0; i < approvers->size(); ++i) {
    const std::string& a = (*approvers)[i];
    if (a.empty() || a.size() > 128 || a == "role:") {
      r.Error(JoinPointer(P(ap, "approvers"), i), "an approver is requester, any, a speaker's name or role:NAME (1 to 128 characters)");
    }
  }
  out->approvers = std::move(*approvers);
}

}  // namespace

void ParseApproval(ConfigReader& r, const std::string& tp, ApprovalRule* out) {
  const std::string ap = P(tp, "approval");
  const Json* v = r.Get(ap);
  if (v == nullptr) return;
  if (v->is_string()) {
    if (auto a = r.Enum(tp, "approval", {"required", "none"})) out->required = *a == "required";
    return;
  }
  if (!v->is_object()) {
    return r.Error(ap, "approval is required, none, or a mapping {required, when, prompt, approvers, ttl_s, "
                       "allow_edit, remember}, got " + DescribeType(*v));
  }
  if (!r.Mapping(ap, {"required", "when", "prompt", "approvers", "ttl_s", "allow_edit", "remember"}, "approval")) return;
  out->required = r.Bool(ap, "required").value_or(true);  // a rule given is a rule meant
  if (r.Has(ap, "when")) {
    const std::string wp = P(ap, "when");
    if (r.IsMapping(wp)) {
      for (const auto& [path, conditions] : r.Get(wp)->items()) ParseConditions(r, P(wp, path), path, out);
    } else {
      r.Error(wp, "when must be a mapping: argument (or $.path) -> {gt|ge|lt|le|eq|ne|in|matches: value}");
    }
  }
  out->prompt = r.String(ap, "prompt").value_or("");
  ParseApprovers(r, ap, out);
  out->ttl_s = static_cast<int>(r.Int(ap, "ttl_s", 1, 7 * 86400).value_or(0));
  out->allow_edit = r.Bool(ap, "allow_edit").value_or(false);
  out->remember = r.Enum(ap, "remember", kRememberScopes).value_or(RememberScope::kNone);
}

void CheckApprovalRule(ConfigReader& r, const std::string& tp, const ToolDef& t) {
  const std::string ap = P(tp, "approval");
  // Only a schema that lists its properties says which arguments there are (an MCP
  // tool's arrives from its server).
  if (!t.input_schema.contains("properties")) return;
  for (const ApprovalCondition& c : t.approval.when) {
    auto path = JsonPath::ParseArgument(c.path);
    if (!path.ok()) continue;  // reported while parsing
    const std::string cp = P(P(ap, "when"), c.path);
    const Json* schema = path->InSchema(t.input_schema);
    if (schema == nullptr) {
      r.Error(cp, "'" + c.path + "' is not an argument of " + t.name + " (its input_schema does not declare it)");
      continue;
    }
    // One type named; a list of types (["integer", "null"]) is not judged here.
    const Json* declared = schema->is_object() && schema->contains("type") ? &(*schema)["type"] : nullptr;
    const std::string type = declared != nullptr && declared->is_string() ? declared->get<std::string>() : "";
    const bool numeric = c.op == ConditionOp::kGt || c.op == ConditionOp::kGe || c.op == ConditionOp::kLt ||
                         c.op == ConditionOp::kLe;
    if (numeric && !type.empty() && type != "number" && type != "integer") {
      r.Error(P(cp, kConditionOps.Name(c.op)), "'" + std::string(kConditionOps.Name(c.op)) + "' compares numbers, but '" +
                                                  c.path + "' is a " + type + " in the input_schema");
    }
    if (c.op == ConditionOp::kMatches && !type.empty() && type != "string") {
      r.Error(P(cp, "matches"), "'matches' reads text, but '" + c.path + "' is a " + type + " in the input_schema");
    }
  }
  for (const std::string& name : Placeholders(t.approval.prompt)) {
    auto path = JsonPath::ParseArgument(name);
    if (!path.ok() || path->InSchema(t.input_schema) == nullptr) {
      r.Error(P(ap, "prompt"), "the prompt's {" + name + "} is not an argument of " + t.name +
                                   " (its input_schema does not declare it)");
    }
  }
}

}  // namespace reins

#include "policy/approval/approval_rules.h"

#include <re2/re2.h>

namespace reins {
namespace {

// Two JSON values equal as a person means it: 100 and 100.0 are the same amount.
bool SameValue(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

}  // namespace

ApprovalRules::ApprovalRules(const AgentConfig& config) {
  for (const ToolDef& tool : config.tools) {
    for (const ApprovalCondition& c : tool.approval.when) {
      auto path = JsonPath::ParseArgument(c.path);
      if (!path.ok()) continue;  // the loader refused it
      Condition compiled{std::move(path).value(), c.op, c.operand, nullptr};
      if (c.op == ConditionOp::kMatches && c.operand.is_string()) {
        compiled.pattern = std::make_shared<const re2::RE2>(c.operand.get<std::string>(), RE2::Quiet);
      }
      conditions_[tool.name].push_back(std::move(compiled));
    }
  }
}

ApprovalRules::~ApprovalRules() = default;
ApprovalRules::ApprovalRules(ApprovalRules&&) noexcept = default;
ApprovalRules& ApprovalRules::operator=(ApprovalRules&&) noexcept = default;

std::optional<ApprovalReason> ApprovalRules::Needs(const ToolDef& tool, const Json& args) const {
  if (!tool.approval.required) return std::nullopt;
  if (tool.approval.when.empty()) return ApprovalReason::kPolicy;
  auto it = conditions_.find(tool.name);
  // An MCP tool's rule may come with a catalog this agent was not compiled with: its
  // conditions are read here, once per call.
  if (it == conditions_.end()) {
    ApprovalRules own(AgentConfig{.tools = {tool}});
    return own.Needs(tool, args);
  }
  for (const Condition& c : it->second) {
    if (!Holds(c, args)) return std::nullopt;
  }
  return ApprovalReason::kCondition;
}

bool ApprovalRules::Holds(const Condition& c, const Json& args) {
  for (const Json* value : c.path.Select(args)) {
    const Json& v = *value;
    switch (c.op) {
      case ConditionOp::kGt: case ConditionOp::kGe: case ConditionOp::kLt: case ConditionOp::kLe: {
        if (!v.is_number() || !c.operand.is_number()) return true;
        const double x = v.get<double>(), bound = c.operand.get<double>();
        const bool holds = c.op == ConditionOp::kGt   ? x > bound
                           : c.op == ConditionOp::kGe ? x >= bound
                           : c.op == ConditionOp::kLt ? x < bound
                                                      : x <= bound;
        if (holds) return true;
        break;
      }
      case ConditionOp::kEq:
        if (SameValue(v, c.operand)) return true;
        break;
      case ConditionOp::kNe:
        if (!SameValue(v, c.operand)) return true;
        break;
      case ConditionOp::kIn:
        for (const Json& option : c.operand) {
          if (SameValue(v, option)) return true;
        }
        break;
      case ConditionOp::kMatches:
        if (!v.is_string() || c.pattern == nullptr || !c.pattern->ok()) return true;
        if (RE2::PartialMatch(v.get<std::string>(), *c.pattern)) return true;
        break;
    }
  }
  return false;
}

}  // namespace reins

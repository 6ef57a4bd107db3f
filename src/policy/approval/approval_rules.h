// Which calls wait for a person (I8): a tool's approval rule read against the arguments a
// call proposes. `approval: required` makes every call of the tool wait (reason
// policy); a rule with `when` only the calls for which every condition holds (reason
// condition). Compiled once per agent: the argument paths and the RE2 patterns of
// `matches`.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/json_path.h"
#include "reins/agent_config.h"
#include "reins/turn.h"

namespace re2 {
class RE2;
}

namespace reins {

class ApprovalRules {
 public:
  explicit ApprovalRules(const AgentConfig& config);
  ~ApprovalRules();
  ApprovalRules(ApprovalRules&&) noexcept;
  ApprovalRules& operator=(ApprovalRules&&) noexcept;

  // Why a call of `tool` with `args` waits for the person, or nothing when it need not.
  // A condition holds when some value its path selects satisfies it; a value of a type
  // the operator does not compare (a string for gt) counts as holding, so that a call
  // the rule cannot judge waits. A path that selects nothing does not hold.
  std::optional<ApprovalReason> Needs(const ToolDef& tool, const Json& args) const;

 private:
  struct Condition {
    JsonPath path;
    ConditionOp op;
    Json operand;
    std::shared_ptr<const re2::RE2> pattern;  // matches
  };
  static bool Holds(const Condition& c, const Json& args);
  std::map<std::string, std::vector<Condition>, std::less<>> conditions_;  // tool -> its `when`
};

}  // namespace reins

// EmpathyFirst rail (seed 000's HEAR enforcement layer): when the user shares
// something emotional and the reply opens with a tool result ("Your prayer request has
// been submitted..."), an empathetic opener is put first. Patterns and openers come
// from the config. A safety net behind deferral, not the main mechanism.
#pragma once

#include <memory>
#include <vector>

#include <re2/re2.h>

#include "turn/policy.h"

namespace reins {

class EmpathyFirst final : public Policy {
 public:
  explicit EmpathyFirst(const Json& config);
  std::string_view Name() const override { return "empathy_first"; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;

 private:
  std::vector<std::unique_ptr<RE2>> emotional_;
  std::vector<std::unique_ptr<RE2>> result_openers_;
  std::vector<std::string> openers_;
};

}  // namespace reins

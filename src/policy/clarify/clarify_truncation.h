// ClarifyTruncation (I2): when a response proposes several calls and one of them may
// ask the user to clarify, the calls after it do not run in that round. The model
// proposed them before seeing the result; they wait until it has.
#pragma once

#include "turn/policy.h"

namespace reins {

class ClarifyTruncation final : public Policy {
 public:
  std::string_view Name() const override { return "clarify_truncation"; }
  void ShapeCalls(TurnContext& ctx, std::vector<ProposedCall>& calls) const override;
};

}  // namespace reins

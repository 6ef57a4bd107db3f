// CallShapeGuard: refuses calls the executor cannot even consider: a tool name the
// agent does not define, or arguments that are not a JSON object.
#pragma once

#include "turn/policy.h"

namespace reins {

class CallShapeGuard final : public Policy {
 public:
  std::string_view Name() const override { return "call_shape"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;
};

}  // namespace reins

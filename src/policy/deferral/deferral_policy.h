// DeferralPolicy (seed 000, I4): a tool whose timing is `deferred` never runs inside
// the model loop. The model sees the tool's deferred_instruction as its result, which
// steers the reply towards the person instead of the write; the real call goes to the
// outbox and runs after the reply is final (src/pipeline/deferred_runner.h).
//
// Runs after the guards: a deferred call with bad arguments or an invented id is
// refused, never queued.
#pragma once

#include "turn/policy.h"

namespace reins {

class DeferralPolicy final : public Policy {
 public:
  std::string_view Name() const override { return "deferral"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;
};

}  // namespace reins

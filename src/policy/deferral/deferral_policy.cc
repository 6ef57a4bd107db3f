#include "policy/deferral/deferral_policy.h"

namespace reins {

CallVerdict DeferralPolicy::Guard(TurnContext&, const ProposedCall& proposed) const {
  if (proposed.tool->timing != ToolTiming::kDeferred) return CallVerdict::Continue();
  return CallVerdict::Replace(proposed.tool->deferred_instruction);
}

}  // namespace reins

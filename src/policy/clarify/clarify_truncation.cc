#include "policy/clarify/clarify_truncation.h"

namespace reins {

void ClarifyTruncation::ShapeCalls(TurnContext&, std::vector<ProposedCall>& calls) const {
  bool after_clarifier = false;
  for (ProposedCall& call : calls) {
    if (after_clarifier) call.truncated = true;
    if (call.tool != nullptr && call.tool->may_clarify) after_clarifier = true;
  }
}

}  // namespace reins

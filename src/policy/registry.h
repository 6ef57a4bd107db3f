// The one place that decides which governance mechanisms an agent runs, and in what
// order: adding a mechanism is a folder under src/policy/ and one line here.
#pragma once

#include "reins/agent_config.h"
#include "turn/policy.h"

namespace reins {

// Builds the policies an agent config turns on, in the order they run.
PolicyChain BuildPolicyChain(const AgentConfig& config);

}  // namespace reins

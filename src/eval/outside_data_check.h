// I13 outside data (INVARIANTS.md): with untrusted_data on, a write that outside data
// steered runs only with the person's approval of that very call. Re-derived from the
// trace and the agent file, not from the guard's own events: the values untrusted
// tools returned (tool.executed), what the person said and chose, what trusted tools
// returned, and whether the person's request asked for the write, as AGENT-CONFIG.md
// ("Untrusted data") defines each.
#pragma once

#include <vector>

#include "eval/scenario_run.h"
#include "reins/agent_config.h"

namespace reins {

void CheckOutsideData(const AgentConfig& config, const std::vector<TurnRun>& turns, std::vector<InvariantViolation>& out);

}  // namespace reins

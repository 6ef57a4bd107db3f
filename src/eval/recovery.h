// What would bring an agent's governed runs home (docs/evaluation.md, "Recovery hints").
// Under the simulated model an agent's governed pass rate can sit far below what its
// scenarios reach with their scripted model; the runs say why (the calls the model
// never made, the harms the rails let through) and the agent file says which governance
// it has not turned on. A hint names the feature, the tools it is about and the
// evidence, for each agent whose gap is wide.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reins/agent_config.h"
#include "reins/json.h"

namespace reins {

// What the governed sim runs of one agent's scenarios showed, and how the same
// scenarios fared with their scripted model.
struct AgentEvidence {
  const AgentConfig* agent = nullptr;
  std::string file;  // the agent file, as the report names it
  int runs = 0, passed = 0;
  int scripted_runs = 0, scripted_passed = 0;
  std::map<std::string, std::map<std::string, int>> harms;  // harm -> tool ("" none) -> count
  std::map<std::string, int> not_called;                    // tool -> failed checks that wanted it run
};

// A gap this wide (scripted rate minus governed sim rate) gets a hint.
inline constexpr double kRecoveryGap = 0.2;

// One entry per agent whose gap is at least kRecoveryGap:
// {"agent", "governed_pass_rate", "scripted_pass_rate", "features": [{"feature", "why"}]}.
Json RecoveryHints(const std::vector<AgentEvidence>& agents);

}  // namespace reins

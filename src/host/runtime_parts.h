// The parts of a Runtime that `reins chat` and `reins serve` build the same way from
// an agent config: its model and audit model (openai, anthropic or the config's own
// scripted replies), and its store (the --store flag, else the config's `store`).
// AgentHost adds the tool backends.
#pragma once

#include <memory>
#include <string>

#include "reins/agent_config.h"
#include "reins/runtime.h"

namespace reins {

// A message fit for the terminal when a part cannot be made.
Result<RuntimeParts> MakeRuntimeParts(const AgentConfig& config, const std::string& store_flag,
                                      std::shared_ptr<Clock> clock);

}  // namespace reins

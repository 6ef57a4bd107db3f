// The model provider a ModelConfig names, for the entry points that talk to a model
// outside a scenario (`reins serve`, `reins chat`): openai and anthropic over HTTP, or
// the scripted model replaying the config's own `replies` (an agent tried offline).
// `sim` needs a scenario's scripted replies as its notion of correct behaviour, so it
// runs only under run, eval and fuzz.
#pragma once

#include <memory>

#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/model_provider.h"
#include "reins/status.h"

namespace reins {

Result<std::shared_ptr<ModelProvider>> MakeModelProvider(const ModelConfig& config, std::shared_ptr<Clock> clock);

}  // namespace reins

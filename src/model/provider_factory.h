// The model provider a ModelConfig names, for the entry points that talk to a model
// outside a scenario (`reins serve`, `reins chat`): openai and anthropic over HTTP, or
// the scripted model replaying the config's own `replies` (an agent tried offline).
// `sim` needs a scenario's scripted replies as its notion of correct behaviour, so it
// runs only under run, eval and fuzz.
//
// As the providers' own SDKs do, an openai or anthropic model without `api_key` or
// `base_url` in the config takes OPENAI_API_KEY / OPENAI_BASE_URL (ANTHROPIC_API_KEY /
// ANTHROPIC_BASE_URL) from the environment; the config wins when it sets them.
#pragma once

#include <memory>

#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/model_provider.h"
#include "reins/status.h"

namespace reins {

// Fills an unset api_key and base_url of an openai or anthropic model from the
// environment variables above.
void ApplyProviderEnvironment(ModelConfig& config);

class ModelTape;

// Applies the environment first. An HTTP model's exchanges go through `tape` when one
// is given (eval's record and replay).
Result<std::shared_ptr<ModelProvider>> MakeModelProvider(ModelConfig config, std::shared_ptr<Clock> clock,
                                                         std::shared_ptr<ModelTape> tape = nullptr);

}  // namespace reins

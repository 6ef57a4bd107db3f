#include "model/provider_factory.h"

#include "model/http_model.h"
#include "model/scripted_model.h"

namespace reins {

Result<std::shared_ptr<ModelProvider>> MakeModelProvider(const ModelConfig& config, std::shared_ptr<Clock> clock) {
  if (config.provider == "scripted") {
    return std::shared_ptr<ModelProvider>(std::make_shared<ScriptedModel>(config.options.value("replies", Json::array())));
  }
  if (config.provider == "openai" || config.provider == "anthropic") {
    return MakeHttpModel(config, std::make_shared<HttpClient>(), std::move(clock));
  }
  return InvalidArgument("provider '" + config.provider +
                         "' runs only in scenario runs (reins run, eval, fuzz); use openai, anthropic or scripted");
}

}  // namespace reins

#include "model/provider_factory.h"

#include <cstdlib>

#include "model/http_model.h"
#include "model/scripted_model.h"

namespace reins {

void ApplyProviderEnvironment(ModelConfig& config) {
  if (!IsHttpProvider(config.provider)) return;
  const bool openai = config.provider == "openai";
  auto fill = [](std::string& field, const char* variable) {
    const char* value = std::getenv(variable);
    if (field.empty() && value != nullptr) field = value;
  };
  fill(config.api_key, openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
  fill(config.base_url, openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL");
}

Result<std::shared_ptr<ModelProvider>> MakeModelProvider(ModelConfig config, std::shared_ptr<Clock> clock,
                                                         std::shared_ptr<ModelTape> tape) {
  ApplyProviderEnvironment(config);
  if (config.provider == "scripted") {
    return std::shared_ptr<ModelProvider>(std::make_shared<ScriptedModel>(config.options.value("replies", Json::array())));
  }
  if (IsHttpProvider(config.provider)) {
    return MakeHttpModel(config, std::make_shared<HttpClient>(), std::move(clock), std::move(tape));
  }
  return InvalidArgument("provider '" + config.provider +
                         "' runs only in scenario runs (reins run, eval, fuzz); use openai, anthropic or scripted");
}

}  // namespace reins

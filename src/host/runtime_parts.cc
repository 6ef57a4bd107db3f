#include "host/runtime_parts.h"

#include "model/provider_factory.h"
#include "reins/store.h"

namespace reins {

Result<RuntimeParts> MakeRuntimeParts(const AgentConfig& config, const std::string& store_flag,
                                      std::shared_ptr<Clock> clock) {
  Result<std::shared_ptr<ModelProvider>> model = MakeModelProvider(config.model, clock);
  if (!model.ok()) return model.status();
  Result<std::unique_ptr<Store>> store = OpenStore(store_flag.empty() ? config.store : store_flag);
  if (!store.ok()) return store.status();
  RuntimeParts parts{.model = *model, .store = std::move(*store), .clock = clock};
  if (config.audit_model) {
    Result<std::shared_ptr<ModelProvider>> audit = MakeModelProvider(*config.audit_model, clock);
    if (!audit.ok()) return Status(audit.status().code(), "audit_model: " + audit.status().message());
    parts.audit_model = *audit;
  }
  return parts;
}

}  // namespace reins

// The one place that decides which governance mechanisms run, and in what order.
#include "policy/clarify/clarify_truncation.h"
#include "policy/guards/call_shape_guard.h"
#include "policy/policy.h"
#include "policy/provenance/provenance_guard.h"
#include "policy/schema/schema_guard.h"

namespace reins {

PolicyChain BuildPolicyChain(const AgentConfig& config) {
  PolicyChain chain;
  // Shape first: later guards may assume a known tool and an argument object.
  chain.push_back(std::make_unique<CallShapeGuard>());
  chain.push_back(std::make_unique<SchemaGuard>(config));
  chain.push_back(std::make_unique<ProvenanceGuard>(config));
  chain.push_back(std::make_unique<ClarifyTruncation>());
  return chain;
}

}  // namespace reins

#include "policy/registry.h"

#include "policy/act/act_not_describe.h"
#include "policy/act/undone_claims.h"
#include "policy/approval/approval_policy.h"
#include "policy/clarify/clarification_answer.h"
#include "policy/clarify/clarify_truncation.h"
#include "policy/deferral/deferral_policy.h"
#include "policy/floor/floor_policy.h"
#include "policy/guards/call_shape_guard.h"
#include "policy/intents/intent_policy.h"
#include "policy/provenance/provenance_guard.h"
#include "policy/rails/empathy_first.h"
#include "policy/rails/honest_claims.h"
#include "policy/rails/no_internal_names.h"
#include "policy/rails/ui_allowlist.h"
#include "policy/safety/safety_override.h"
#include "policy/schema_guard/schema_guard.h"
#include "policy/untrusted/no_untrusted_links.h"
#include "policy/untrusted/outside_ledger.h"
#include "policy/untrusted/untrusted_data_guard.h"

namespace reins {

PolicyChain BuildPolicyChain(const AgentConfig& config) {
  PolicyChain chain;
  // One reading of the agent's tools for every policy that reads a reply or a request
  // for the actions it speaks of (policy/act/reply_reading.h).
  const auto reader = std::make_shared<const ActionReader>(config.tools);
  // The gate decides before anything else whether a turn may enter at all.
  if (config.floor.enabled) chain.Add(std::make_unique<FloorPolicy>(config));
  if (!config.rails.safety_override.empty()) chain.Add(std::make_unique<SafetyOverride>(config));
  // Guards first: later policies may assume a known tool, an argument object, valid
  // arguments and known ids. Deferral comes after them: nothing invalid is queued.
  chain.Add(std::make_unique<CallShapeGuard>());
  chain.Add(std::make_unique<SchemaGuard>(config));
  chain.Add(std::make_unique<ProvenanceGuard>(config));
  // Before the approval rule: a call both would pause asks once, with where its outside
  // values came from (the person approving it approves both).
  if (config.untrusted_data.enabled || !config.rails.no_untrusted_links.is_null()) {
    chain.Add(std::make_unique<OutsideDataRecorder>(config.untrusted_data.max_identifiers));
  }
  if (config.untrusted_data.enabled) chain.Add(std::make_unique<UntrustedDataGuard>(config, reader));
  chain.Add(std::make_unique<ApprovalPolicy>(config));
  chain.Add(std::make_unique<DeferralPolicy>());
  chain.Add(std::make_unique<ClarifyTruncation>());
  chain.Add(std::make_unique<ClarificationAnswer>());
  if (!config.intents.empty()) chain.Add(std::make_unique<IntentPolicy>(config));
  // Before the rails, always: a reply never claims a call this turn refused, skipped,
  // withdrawn, failed or left uncertain (I5); it reads the model's own words.
  chain.Add(std::make_unique<UndoneClaims>(config, reader));
  // Before the rails: it reads the model's own words, tool names included.
  if (!config.rails.act_not_describe.is_null()) {
    chain.Add(std::make_unique<ActNotDescribe>(config, config.rails.act_not_describe, reader));
  }
  // Rails, in the order they edit the reply: names first (later rails match titles),
  // the opener, then corrections at the end.
  if (!config.rails.no_internal_names.is_null()) chain.Add(std::make_unique<NoInternalNames>(config));
  if (!config.rails.empathy_first.is_null()) chain.Add(std::make_unique<EmpathyFirst>(config.rails.empathy_first));
  if (!config.rails.honest_claims.is_null()) {
    chain.Add(std::make_unique<HonestClaims>(config, config.rails.honest_claims, reader));
  }
  if (!config.rails.ui_allowlist.is_null()) chain.Add(std::make_unique<UiAllowlist>(config.rails.ui_allowlist));
  if (!config.rails.no_untrusted_links.is_null()) {
    chain.Add(std::make_unique<NoUntrustedLinks>(config, config.rails.no_untrusted_links));
  }
  return chain;
}

}  // namespace reins

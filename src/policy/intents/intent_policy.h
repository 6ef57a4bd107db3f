// IntentPolicy: evidence bundles. An intent whose pattern matches the person's text
// names the tools a good answer needs. When the model answers without having run them:
//   force - the loop asks once more with tool choice forced to the first missing tool
//           (seed 000's "no tool called": a prayer need with no prayer request);
//   audit - recorded; the audit pass (docs/audit.md) checks the reply against it, and
//           with the audit off it is recorded only (`reins check` warns);
//   off   - recorded only.
// At most one forced retry per intent per turn (I9).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "turn/policy.h"

namespace reins {

// The intents' state in a turn: those that already had their forced retry.
struct IntentTurn {
  std::set<std::string> retried;
};

class IntentPolicy final : public Policy {
 public:
  explicit IntentPolicy(const AgentConfig& config);
  std::string_view Name() const override { return "intents"; }
  std::optional<std::string> RequiredToolMissing(TurnContext& ctx) const override;

 private:
  struct Intent {
    const IntentConfig* config;
    std::unique_ptr<RE2> match;
  };
  std::vector<Intent> intents_;
};

// The `required` tools not among those that `ran` (successfully, or queued).
std::vector<std::string> MissingTools(const std::vector<std::string>& ran, const std::vector<std::string>& required);

}  // namespace reins

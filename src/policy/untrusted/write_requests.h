// Which writes a person's request asks for (AGENT-CONFIG.md "Untrusted data"): an
// intent that matched the request names the tool, or the request names the tool's
// action by its name, title or verbs (ActionReader::Asks, read strictly). Once outside
// data is in a session, a write the request did not ask for may be the outside data's
// idea; untrusted_data's guard and the I13 checker ask this one question.
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "policy/act/action_talk.h"
#include "reins/agent_config.h"

namespace reins {

class WriteRequests {
 public:
  // `reader`: the agent's, shared (policy/act/reply_reading.h); none makes its own.
  explicit WriteRequests(const AgentConfig& config, std::shared_ptr<const ActionReader> reader = nullptr);
  bool Asked(std::string_view request, const ToolDef& tool) const;

 private:
  std::shared_ptr<const ActionReader> reader_;
  std::vector<std::pair<std::unique_ptr<RE2>, const IntentConfig*>> intents_;
};

}  // namespace reins

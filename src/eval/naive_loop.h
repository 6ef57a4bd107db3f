// NaiveLoop: the baseline of `--governor off`, the "before" of the seed notes. It is
// the tool loop most agent code starts with: ask the model, run every call it proposed
// immediately and in order, feed the results back, repeat until it answers in text.
// No stop on clarification or error, no truncation, no schema or provenance check, no
// approval, no deferral, no floor gate, no rails, no audit, no plan.
//
// It records the same trace events as the runtime (model.call, tool.executed,
// reply.final) so that the same checks, invariant checks and harm detectors judge both.
// A lease a tool result asks for, or a tool's own lease on a clarification, is recorded
// (never enforced), so the floor invariant can see who should have been kept out.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/model_provider.h"
#include "reins/tool_backend.h"
#include "reins/turn.h"

namespace reins {

class NaiveLoop {
 public:
  NaiveLoop(const AgentConfig& config, ModelProvider& model,
            std::map<std::string, std::shared_ptr<ToolBackend>> tools, Clock& clock);

  Task<TurnResult> RunTurn(const TurnInput& input);
  const std::vector<Message>& history() const { return history_; }

 private:
  std::string UserMessage(const TurnInput& input) const;
  Task<ResultEnvelope> Execute(const ToolCall& call, const std::string& turn_id);

  const AgentConfig& config_;
  ModelProvider& model_;
  std::map<std::string, std::shared_ptr<ToolBackend>> tools_;
  Clock& clock_;
  std::shared_ptr<const std::vector<ToolSpec>> specs_;
  std::vector<Message> history_;
  std::optional<Clarification> last_clarification_;
  std::optional<Lease> lease_;
  std::string user_text_;
  int turns_ = 0;
};

}  // namespace reins

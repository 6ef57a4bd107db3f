// ScriptedModel: the deterministic model of scenario files (docs/scenarios.md). Each
// call takes the first unused reply whose `when` matches (turn, purpose, last,
// user_matches, after_tool, step); `repeat: true` keeps a reply reusable. Per-turn
// replies are put in front of the list. No match fails the call with a message that
// says which call found nothing, so a scenario author sees what to add.
//
// It records every call (purpose, tool choice) so tests can see what the runtime asked.
//
// Thread-safety: calls may come from several threads at once (`reins serve` with turns
// on several strands); calls() and AddTurnReplies are for before and after them.
#pragma once

#include <mutex>
#include <vector>

#include "reins/model_provider.h"

namespace reins {

class ScriptedModel final : public ModelProvider {
 public:
  // `replies`: the validated `model.replies` list.
  explicit ScriptedModel(const Json& replies);
  // Replies for one turn only (a turn's `model:` key), tried before the others.
  void AddTurnReplies(int turn, const Json& replies);

  std::string_view Name() const override { return "scripted"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override;

  // The first unused matching reply, consumed; nullopt when none matches (the
  // simulated model then improvises). Recorded like Complete.
  std::optional<ModelResponse> TryReply(const ModelRequest& request);
  // The calls of the next unused reply that calls tools and is not for an earlier turn,
  // without consuming it: the follow-up a model that does not wait would propose now.
  std::vector<ToolCall> PeekFollowUp(const ModelRequest& request) const;

  struct CallRecord {
    int turn = 0;
    Purpose purpose = Purpose::kChat;
    ToolChoice tool_choice;
    int reply = -1;  // index of the reply used, -1 when none matched
  };
  const std::vector<CallRecord>& calls() const { return calls_; }

 private:
  struct Reply {
    Json when;
    Json body;
    bool repeat = false;
    bool used = false;
  };
  bool Matches(const Json& when, const ModelRequest& request) const;
  ModelResponse Render(const Json& body, int call_number) const;

  mutable std::mutex mu_;
  std::vector<Reply> replies_;     // `used` under mu_
  std::vector<CallRecord> calls_;  // under mu_
};

}  // namespace reins

// TurnContext: the state of one turn as it moves through the pipeline, shared by the
// stages and the policies. Owned by the pipeline for the duration of the turn; not
// shared between threads. Policies read it and record through it; only the pipeline
// (src/pipeline) advances the turn's phase.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "turn/reply_stream.h"
#include "turn/session_history.h"
#include "turn/session_state.h"
#include "reins/async.h"
#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/message.h"
#include "reins/model_provider.h"
#include "reins/turn.h"

namespace reins {

// What a turn's input did to the clarification or approval its session had pending.
// On the heap only when the turn decides something (TurnContext::decide()): most turns
// decide nothing, and the turn's context lives as long as the turn waits on its model.
struct PendingDecisions {
  std::unique_ptr<PendingClarification> answered;  // `select` answered it ...
  std::string chosen_option_id;                  // ... with this option
  std::string withdrawn_clarification_id;        // superseded by a new request, or cancelled
  std::unique_ptr<PendingApproval> decided_approval;  // `approve` decided it ...
  ApprovalAnswer approval_answer;                   // ... this way
  Json approved_args;                               // ... with these arguments (null: as proposed)
  std::string cancelled_approval_id;                // withdrawn by a cancel
  std::string lapsed_approval_id;                   // withdrawn because it waited past its ttl_s

  const ClarificationOption* ChosenOption() const {
    if (!answered) return nullptr;
    for (const ClarificationOption& o : answered->clarification.options) {
      if (o.id == chosen_option_id) return &o;
    }
    return nullptr;
  }
};

// The id the decided call of an approval has when it re-enters history (I10): the turn
// that answers the approval runs, or refuses, exactly that call.
inline std::string ApprovedCallId(const PendingApproval& a) { return "approved_" + a.id; }

// Whether history[i] is the note of an approval's answer ("The user approved running
// ..."): the runtime's words about the paused call, which the next message proposes
// again, not the person's own.
inline bool IsApprovalNote(const std::vector<Message>& history, size_t i) {
  return history[i].role == Role::kUser && i + 1 < history.size() && history[i + 1].role == Role::kAssistant &&
         history[i + 1].tool_calls.size() == 1 && history[i + 1].tool_calls[0].id.starts_with("approved_");
}

struct TurnContext {
  TurnContext(const AgentConfig& c, Clock& clk, SessionState& s, SessionHistory& h)
      : config(c), clock(clk), session(s), history_base(h.size()), history_(h) {}

  const AgentConfig& config;
  Clock& clock;
  SessionState& session;
  // The conversation (see older_history_left_out); this turn appends from history_base.
  // Read here; a message is added with Append and changed with EditMessage, through the
  // session's SessionHistory, which keeps its request text in step.
  const std::vector<Message>& history() const { return history_.messages(); }
  size_t history_base;
  Message& Append(Message m) { return history_.Append(std::move(m)); }
  // Message `i`, to change in place: its request text is written again at the next call.
  Message& EditMessage(size_t i) { return history_.Edit(i); }
  // The session's history itself, for a model call that lends its messages to the
  // request and gives them back as they were, and reuses their kept request text.
  SessionHistory& session_history() { return history_; }
  // The session holds only the part of its history a model call may still see
  // (pipeline/context_window.h): older turns exist in the store, never in a request.
  bool older_history_left_out = false;

  // The runtime's copy, which outlives the turn's context (a copy here was one more heap
  // block for every turn in flight). The turn's own id is result.turn_id.
  std::string_view session_id;
  TurnInput input;
  int64_t waited_ms = 0;       // how long the turn waited behind the session's earlier ones
  std::string_view key_salt;  // RuntimeParts::idempotency_salt (the runtime's, which outlives its turns)
  // The text the turn is about: what the person said, or, for a turn that answers a
  // clarification or an approval, the request that asked it (kept with the decision).
  std::string_view user_text() const {
    if (decisions_ && decisions_->decided_approval) return decisions_->decided_approval->request_text;
    if (decisions_ && decisions_->answered) return decisions_->answered->request_text;
    return input.say ? std::string_view(*input.say) : std::string_view();
  }
  // Tools that ran (or were queued) for that request in the turns before this one (it
  // was interrupted by a clarification or an approval).
  std::vector<std::string> request_tools;
  // Tools that ran (or were queued) for the request so far, earlier turns included.
  std::vector<std::string> RequestTools() const {
    std::vector<std::string> all = request_tools;
    for (const ToolOutcome& o : result.tools) {
      if (o.SucceededOrQueued()) all.push_back(o.name);
    }
    return all;
  }
  TurnResult result;
  int response_index = 0;  // model responses so far in this turn
  int loop_rounds = 0;     // model calls of the governed loop so far (limits.max_rounds)
  Purpose purpose = Purpose::kChat;  // what the loop's model calls are for right now
  // The one continuation the loop may ask for when a response was cut off.
  bool cut_off_retried = false;
  std::string step_id;               // plan mode: the step being run
  // The floor lease as stored when the turn began (SetLease), and the change this turn
  // makes (ChangeLease): on the heap once set, for an agent with floor control; none for
  // the others.
  const Lease& lease() const { return floor_ ? floor_->lease : kNoLease; }
  const std::optional<Lease>& lease_change() const { return floor_ ? floor_->change : kNoLeaseChange; }
  void SetLease(Lease held) { Floor().lease = std::move(held); }
  void ChangeLease(Lease to) { Floor().change = std::move(to); }
  // What few turns have. On the heap once a turn has any (extend()): most have none, and
  // the turn's context lives as long as the turn waits on its model (these five took
  // 144 of its bytes).
  struct Extras {
    // When not empty, only these tools may run (an audit's gather round).
    std::set<std::string> allowed_tools;
    // Calls the runtime proposes itself (the safety override's flag tool): guarded like
    // the model's calls and queued, but never in the model's history.
    std::vector<ToolCall> system_calls;
    // Extra lines for the model's system prompt in this turn (e.g. who holds the floor).
    std::vector<std::string> system_notes;
    // Notices waiting for this turn's reply (earlier background failures): id, text.
    std::vector<std::pair<int64_t, std::string>> pending_notices;
    std::vector<int64_t> delivered_notices;
  };
  const Extras& extras() const { return extras_ ? *extras_ : kNoExtras; }
  Extras& extend() {
    if (!extras_) extras_ = std::make_unique<Extras>();
    return *extras_;
  }
  // What this turn's input did to what the session had pending; the turn's record
  // carries it to the store. decide() makes it on the turn's first decision.
  const PendingDecisions& decisions() const { return decisions_ ? *decisions_ : kNoDecisions; }
  // The person granted the approval this turn answers, for exactly this call (its id,
  // tool and the arguments they approved, edited or not): every guard that would pause
  // a call lets it through (I8).
  bool Approved(const ToolCall& call) const {
    if (!decisions_ || !decisions_->approval_answer.decision || !decisions_->decided_approval) return false;
    const PendingApproval& a = *decisions_->decided_approval;
    const Json& args = decisions_->approved_args.is_null() ? a.args : decisions_->approved_args;
    return call.id == ApprovedCallId(a) && call.name == a.tool && call.args == args;
  }
  PendingDecisions& decide() {
    if (!decisions_) decisions_ = std::make_unique<PendingDecisions>();
    return *decisions_;
  }
  // Whether `tool`'s backend holds a call open across a question it asked mid-call (an
  // MCP elicitation): only such a call can resume with the person's answer. Set by the
  // pipeline to the question its tool router answers (the pipeline's own function, which
  // outlives its turns: a pointer here is 24 bytes fewer than a function of each turn's).
  using ResumesQuestions = std::function<bool(const std::string& tool)>;
  const ResumesQuestions* resumes_questions = nullptr;

  // limits.turn_timeout_ms: when the turn must have its reply (0: no limit).
  int64_t deadline_ms = 0;
  // A model call was cut short by that deadline: the turn fails, whatever stage saw it.
  bool timed_out = false;
  // Time left before the deadline (0 once past it); a large number without a deadline.
  int64_t RemainingMs() const {
    if (deadline_ms == 0) return int64_t{1} << 40;
    return std::max<int64_t>(0, deadline_ms - clock.NowMs());
  }

  // The input was accepted: from here on the turn has a result (even a blocked or a
  // cancelled one); until then it may still be refused with nothing recorded.
  bool admitted = false;

  // What a mechanism keeps for this turn only, in a slot of its own (Envoy's
  // FilterState): `ctx.Slot<RepeatTurn>()` makes a T on first use and returns the
  // same one for the rest of the turn. A new mechanism keeps its turn state here
  // instead of adding fields to this struct.
  template <typename T>
  T& Slot() {
    static constexpr char kKey = 0;  // one address per T
    for (auto& [key, state] : slots_) {
      if (key == &kKey) return *static_cast<T*>(state.get());
    }
    slots_.emplace_back(&kKey, std::make_shared<T>());
    return *static_cast<T*>(slots_.back().second.get());
  }

  // What a turn whose caller streams it (TurnInput.on_event) has besides, set by the
  // runtime; null for the others (most turns: the four take 104 bytes of a context that
  // lives as long as its turn waits on the model).
  struct Streamed {
    std::function<void(const TraceEvent&)> on_emit;  // each event as it is emitted
    // Reply text, sent to the caller at once, and the store write that must come before
    // it (I12): the deferred calls queued so far, staged (Store::StageOutbox). The
    // pipeline makes `reply_stream` over them.
    std::function<void(std::string_view)> send_reply_text;
    std::function<Task<Status>(TurnContext&)> stage_writes;
    std::unique_ptr<ReplyStream> reply_stream;
  };
  std::unique_ptr<Streamed> streamed;
  // A stream that is live: the model's text goes out sentence by sentence.
  ReplyStream* live_stream() const {
    if (!streamed || !streamed->reply_stream || !streamed->reply_stream->live()) return nullptr;
    return streamed->reply_stream.get();
  }

  void Emit(EventType type, EventData data = {}) {
    result.events.push_back({type, result.turn_number, clock.NowMs(), std::move(data)});
    if (streamed && streamed->on_emit) streamed->on_emit(result.events.back());
  }
  void Emit(EventName name, EventData data = {}) { Emit(name.type, std::move(data)); }
  const ToolDef* FindTool(const std::string& name) const { return config.FindTool(name); }

 private:
  SessionHistory& history_;
  struct FloorLease {
    Lease lease;
    std::optional<Lease> change;
  };
  FloorLease& Floor() {
    if (!floor_) floor_ = std::make_unique<FloorLease>();
    return *floor_;
  }
  static inline const Lease kNoLease{};
  static inline const std::optional<Lease> kNoLeaseChange{};
  std::unique_ptr<FloorLease> floor_;
  static inline const PendingDecisions kNoDecisions{};
  std::unique_ptr<PendingDecisions> decisions_;
  static inline const Extras kNoExtras{};
  std::unique_ptr<Extras> extras_;
  std::vector<std::pair<const void*, std::shared_ptr<void>>> slots_;
};

}  // namespace reins

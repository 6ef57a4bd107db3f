// A turn's input and its result (the TurnResult of docs/http-api.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/agent_config.h"
#include "reins/envelope.h"
#include "reins/heap_optional.h"
#include "reins/json.h"
#include "reins/status.h"
#include "reins/trace.h"

namespace reins {

// How a turn ended.
enum class TurnStatus {
  kCompleted,
  kAwaitingClarification,
  kAwaitingApproval,
  kBlocked,
  kCancelled,
  kFailed,
};
std::string_view TurnStatusName(TurnStatus s);

// The person's answer to a pending approval (`approve`): true or false, or the long form
// {decision, args?, message?, remember?} (docs/human-in-the-loop.md).
struct ApprovalAnswer {
  ApprovalAnswer() = default;
  ApprovalAnswer(bool d) : decision(d) {}  // NOLINT: `approve: true` is the short form
  bool decision = false;
  // null: the call as proposed; an object: approved with these arguments in place of
  // those of the same name (the rest stay), when the tool's approval.allow_edit says so.
  Json args;
  std::string message;    // what the person said with it; a denial's reaches the model
  bool remember = false;  // and allow this tool for the rest of the session (approval.remember)
  bool plain() const { return args.is_null() && message.empty() && !remember; }
};
// Reads `approve` as a request gives it: true, false or {decision, args?, message?,
// remember?}; InvalidArgument saying what is wrong otherwise.
Result<ApprovalAnswer> ApprovalAnswerFromJson(const Json& j);
Json ApprovalAnswerToJson(const ApprovalAnswer& a);

struct TurnInput {
  std::string speaker = "user";
  std::optional<std::string> say;
  std::optional<std::string> select;      // option id answering the pending clarification
  std::optional<ApprovalAnswer> approve;  // answers the pending approval
  // Stops whatever is pending instead of saying anything (the API's DELETE .../lease):
  // releases the floor, withdraws a pending clarification, approval or plan.
  bool cancel = false;
  // Ends the standing permission the person gave this tool ("always", approval.remember)
  // instead of saying anything (the API's DELETE .../approvals/{tool}).
  std::string revoke;
  // The roles the caller acts in (its API key's, docs/security.md): an approval whose
  // approvers name role:NAME admits a speaker whose request carries NAME. Set by the
  // server from the key, never from the request body; not stored.
  std::vector<std::string> roles;
  Json page_context;                  // null when absent
  // Set by an API client so that a retried submission runs nothing twice; stored
  // with the turn's input.
  std::string idempotency_key;
  // The caller's W3C trace context (`traceparent`), when its request carried one: the
  // turn's span joins the caller's trace, and tools called over HTTP are told so
  // (docs/telemetry.md). Stored with the input; not part of what makes a retry the
  // same request.
  std::string traceparent;
  // The words a person typed that the OpenAI-compatible door read as `select` or
  // `approve` ("2", "John Smith (Acme)", "go ahead"): stored with the input so that the
  // timeline shows what they said; not part of what makes a retry the same request.
  std::string words;
  // Streaming: receives the turn's events. Progress events (tools, model calls) arrive
  // as they happen; the reply, clarification and approval events only once the turn is
  // committed (I12: nothing is delivered before the writes it queued are durable);
  // then the deferred calls' events as they run. Not stored.
  std::function<void(const TraceEvent&)> on_event;
};

// Whether a turn input is well formed, whoever built it (an API request, a scenario, an
// embedder): a speaker of 1 to 128 characters, an idempotency key (when given) of 1 to
// 200 printable ASCII characters without spaces, and exactly one of say, select or
// approve unless it is a cancel or a revoke. InvalidArgument naming what is wrong otherwise.
// Runtime::RunTurn refuses what this refuses; the HTTP API checks with it too.
Status CheckTurnInput(const TurnInput& in);

// What happened to one proposed tool call.
struct ToolOutcome {
  enum class Status { kExecuted, kDeferred, kRejected, kSkipped };
  std::string call_id;
  std::string name;
  Json args;
  Status status = Status::kExecuted;
  std::string reason;  // rejected: schema | provenance | unknown_tool | invalid_json ...; skipped: truncated |
                       // chain_stopped | uncertain (a write whose earlier try may have run, not run again)
  std::string message; // the guard's or the backend's message
  std::optional<ResultEnvelope> result;  // executed calls
  int64_t latency_ms = 0;
  int response_index = 0;  // which model response of the turn proposed it (1-based)
  int position = 0;        // 0-based position in that response
  std::string idempotency_key;  // deferred calls: turn id + response + position; immediate writes: the
                                // write-ahead record's key (pipeline/write_ledger.h)
  std::string step_id;          // plan mode: the step whose loop proposed it

  // Ran successfully in the loop, or is queued to run after the reply (a deferred call
  // counts as done for what the turn needed; its honesty is the failure note's job).
  bool SucceededOrQueued() const {
    return status == Status::kDeferred || (status == Status::kExecuted && result && result->success);
  }
};
std::string_view ToolOutcomeStatusName(ToolOutcome::Status s);

// A floor lease: while active, only `owner` is admitted to the session (I6).
struct Lease {
  std::string owner;  // "" when there is none
  std::string domain;
  int64_t expires_at_ms = 0;
  int64_t version = 0;  // store version, for compare-and-set
  bool ActiveAt(int64_t now_ms) const { return !owner.empty() && now_ms < expires_at_ms; }
};

struct PendingClarification {
  std::string id;
  Clarification clarification;
  std::string tool;         // the tool that asked
  std::string entity_type;  // the entity the options are ids of ("" if none)
  std::string request_text; // the user's request the clarification interrupted
  // Tools that already ran (or were queued) for that request: an intent is satisfied by
  // its request, across the clarification that followed it.
  std::vector<std::string> request_tools;
};

// Why a call waits for a person: its tool's approval rule, or outside data steering it
// (untrusted_data, AGENT-CONFIG.md "Untrusted data").
enum class ApprovalReason { kPolicy, kCondition, kUntrustedData };
inline constexpr EnumNames<ApprovalReason, 3> kApprovalReasons{{{{ApprovalReason::kPolicy, "policy"},
                                                                 {ApprovalReason::kCondition, "condition"},
                                                                 {ApprovalReason::kUntrustedData, "untrusted_data"}}}};

// A call that waits for a person's approval (I8).
struct PendingApproval {
  std::string id;
  std::string tool;
  Json args;
  std::string request_text;  // the request the call was made for
  std::vector<std::string> request_tools;  // as in PendingClarification
  ApprovalReason reason = ApprovalReason::kPolicy;
  std::string prompt;  // the question the person reads, in words
  // untrusted_data: each argument that holds an outside value -> the calls whose results
  // it came from, [{"tool", "call_id", "turn"}]; null for the other reasons.
  Json provenance;
  std::string requested_by;            // the speaker whose turn proposed the call
  std::vector<std::string> approvers;  // the tool's approval.approvers; empty: the requester
  int64_t expires_at_ms = 0;           // it lapses then (approval.ttl_s); 0: never
  bool allow_edit = false;             // may be approved with changed arguments
  bool may_remember = false;           // may be answered "always, for this session"

  // Whether `speaker`, acting in `roles`, may answer it: the approvers entry that admits
  // them ("requester", "any", their name or "role:NAME"), or nothing.
  std::optional<std::string> AdmittedAs(const std::string& speaker, const std::vector<std::string>& roles) const;
  // Who may, in words: "the requester (alice)", "pharmacist or role:pharmacy".
  std::string ApproversInWords() const;
  bool LapsedAt(int64_t now_ms) const { return expires_at_ms != 0 && now_ms >= expires_at_ms; }
};
Json PendingApprovalToJson(const PendingApproval& a);  // as the API shows it
PendingApproval PendingApprovalFromStored(const Json& j);
Json PendingApprovalToStored(const PendingApproval& a);

// Where a plan step stands: paused waits for the person (an approval, a question).
enum class StepStatus { kPending, kPaused, kCompleted, kCompletedUnvalidated, kFailed };
inline constexpr EnumNames<StepStatus, 5> kStepStatuses{{{{StepStatus::kPending, "pending"},
                                                          {StepStatus::kPaused, "paused"},
                                                          {StepStatus::kCompleted, "completed"},
                                                          {StepStatus::kCompletedUnvalidated, "completed_unvalidated"},
                                                          {StepStatus::kFailed, "failed"}}}};
// What checking a finished step's tool calls found (kNone: not checked yet).
enum class StepValidation { kNone, kPassed, kFailed, kUnvalidated, kSkipped };
inline constexpr EnumNames<StepValidation, 5> kStepValidations{{{{StepValidation::kNone, ""},
                                                                 {StepValidation::kPassed, "passed"},
                                                                 {StepValidation::kFailed, "failed"},
                                                                 {StepValidation::kUnvalidated, "unvalidated"},
                                                                 {StepValidation::kSkipped, "skipped"}}}};

// One step of a plan (plan-execute mode, seed 003, I7).
struct PlanStep {
  std::string id;
  std::string description;
  std::string step_type = "reasoning";  // tool | reasoning (no stepType: reasoning)
  std::vector<std::string> required_tools;
  std::string expected_outcome;
  ValidationMode validation_mode = ValidationMode::kStrict;  // per step, else the plan's
  StepStatus status = StepStatus::kPending;
  StepValidation validation_status = StepValidation::kNone;
  std::vector<std::string> actual_tool_calls;
  int retries = 0;
  std::string outcome;                  // the step's text answer
  // Deferred writes the step queued (they count for it when queued, I7), and what
  // became of each once it ran: queued | succeeded | failed.
  struct Write {
    std::string key;  // the outbox's idempotency key
    std::string tool;
    std::string outcome = "queued";
  };
  std::vector<Write> deferred_writes;
};

Json PlanStepToJson(const PlanStep& step);
PlanStep PlanStepFromJson(const Json& j);

struct TurnResult {
  std::string turn_id;
  int turn_number = 0;
  TurnStatus status = TurnStatus::kCompleted;
  std::string reply;
  std::string error;  // failed turns: why, in a plain sentence
  std::string blocked_reason;  // blocked turns: who holds the floor, for what, until when
  // Rare, so on the heap (HeapOptional): many turns hold a TurnResult while they wait
  // on their models, and these three as std::optional were 480 of its 760 bytes.
  HeapOptional<Lease> lease;  // the lease active after this turn
  HeapOptional<PendingClarification> clarification;
  HeapOptional<PendingApproval> approval;  // pending after this turn
  std::vector<PlanStep> plan;               // plan-execute mode
  Json audit;                               // {repair, verdict, error?} when the audit ran
  std::vector<ToolOutcome> tools;
  std::vector<std::string> rails;
  std::vector<std::string> notices;
  std::vector<TraceEvent> events;
  int model_calls = 0;
};

Json TurnInputToJson(const TurnInput& in);

// The TurnResult JSON of the HTTP API (events are not included; tools only when asked).
Json TurnResultToJson(const TurnResult& r, bool with_tools = true);

}  // namespace reins

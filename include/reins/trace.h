// Trace events: the record of everything a turn did, in order. The scenario runner
// checks every invariant (INVARIANTS.md) against these events, so each event carries
// what a checker needs to re-derive the guarantee independently of the executor:
// model response index and call position for tool events, full arguments and results.
//
// The event types are declared once, here, with the fields their `data` may carry;
// docs/trace.md describes each and a test holds the two together
// (tests/eval/trace_doc_test.cc). Code names an event by its enumerator or by its
// name as a string literal: `e.type == "tool.executed"` and `Emit("tool.executed", ...)`
// are checked while compiling (EventName is consteval), so a misspelt or retired name
// does not build, and the comparison is between enumerators, not strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reins/json.h"

namespace reins {

enum class EventType : uint8_t {
  // The turn
  kTurnStarted, kTurnBlocked, kTurnCancelled, kTurnFailed, kTurnCompleted, kReplyFinal, kReplyDelta, kNotice,
  // The model
  kModelCall, kModelResponse, kModelError, kModelRefusal, kModelCallsIgnored,
  // Tool calls
  kToolExecuted, kToolProgress, kToolRejected, kToolSkipped, kToolDeferred, kDeferredExecuted, kDeferredNote,
  kNoticeCreated, kWriteUncertain,
  // Clarifications, approvals and the floor
  kClarification, kClarificationAnswered, kClarificationSuperseded, kClarificationCancelled, kApprovalRequested,
  kApproval, kApprovalGranted, kApprovalDenied, kApprovalCancelled, kApprovalLapsed, kApprovalRemembered,
  kApprovalStanding, kApprovalRevoked, kLeaseOpened, kLeaseReleased, kLeaseExpired,
  // Plans, intents, the audit, rails and the safety override
  kPlan, kPlanInvalid, kPlanFallback, kPlanResumed, kPlanAbandoned, kPlanStepStarted, kPlanStepRetry,
  kPlanStepFinished, kIntentMissing, kActRetry, kActMissing, kAudit, kAuditError, kRailFired, kHonestClaimsCorrected, kSafetyOverride,
  // Outside data (untrusted_data)
  kUntrustedViolation, kUntrustedOverflow,
  // A stored event whose type this build does not know (written by a newer reins).
  kUnknown,
};

// An event type's name in JSON, and the fields its `data` may carry (space-separated).
struct EventSpec {
  EventType type;
  std::string_view name;
  std::string_view fields;
};

// The call fields every tool event carries (docs/trace.md, "the call fields").
#define REINS_CALL_FIELDS "call_id name args response position "

inline constexpr EventSpec kEventSpecs[] = {
    {EventType::kTurnStarted, "turn.started", "turn_id speaker input reply withheld"},
    {EventType::kTurnBlocked, "turn.blocked", "reason stale"},
    {EventType::kTurnCancelled, "turn.cancelled", "speaker"},
    {EventType::kTurnFailed, "turn.failed", "error"},
    {EventType::kTurnCompleted, "turn.completed", "status phase"},
    {EventType::kReplyFinal, "reply.final", "text streamed"},
    // Reply text sent while the turn runs (a streamed reply); never in the stored trace.
    {EventType::kReplyDelta, "reply.delta", "text"},
    {EventType::kNotice, "notice", "id text"},
    {EventType::kModelCall, "model.call", "purpose tool_choice model step repeat round"},
    {EventType::kModelResponse, "model.response", "response text tool_calls finish usage model provider_finish"},
    {EventType::kModelError, "model.error", "message"},
    {EventType::kModelRefusal, "model.refusal", "response text"},
    {EventType::kModelCallsIgnored, "model.calls_ignored", "response reason tool_calls"},
    {EventType::kToolExecuted, "tool.executed",
     REINS_CALL_FIELDS "result success next_action latency_ms may_clarify untrusted write_key replayed attempt"},
    {EventType::kToolProgress, "tool.progress", "call_id name progress total message"},
    {EventType::kToolRejected, "tool.rejected", REINS_CALL_FIELDS "reason guard message"},
    {EventType::kToolSkipped, "tool.skipped", REINS_CALL_FIELDS "reason idempotency_key"},
    {EventType::kToolDeferred, "tool.deferred", REINS_CALL_FIELDS "idempotency_key instruction policy"},
    {EventType::kDeferredExecuted, "deferred.executed",
     "name args idempotency_key result success next_action latency_ms mode"},
    {EventType::kDeferredNote, "deferred.note", "text"},
    {EventType::kNoticeCreated, "notice.created", "text tool"},
    {EventType::kWriteUncertain, "write.uncertain", REINS_CALL_FIELDS "write_key attempts since_ms"},
    {EventType::kClarification, "clarification", "type question options id tool entity_type"},
    {EventType::kClarificationAnswered, "clarification.answered", "id option_id title entity_type tool"},
    {EventType::kClarificationSuperseded, "clarification.superseded", "id"},
    {EventType::kClarificationCancelled, "clarification.cancelled", "id"},
    {EventType::kApprovalRequested, "approval.requested", REINS_CALL_FIELDS "approval_id reason condition"},
    {EventType::kApproval, "approval",
     "id tool args reason prompt provenance approvers requested_by expires_at allow_edit remember"},
    {EventType::kApprovalGranted, "approval.granted", "id tool args by as approved_args message remember"},
    {EventType::kApprovalDenied, "approval.denied", "id tool args by as message"},
    {EventType::kApprovalCancelled, "approval.cancelled", "id"},
    {EventType::kApprovalLapsed, "approval.lapsed", "id tool args expired_at"},
    {EventType::kApprovalRemembered, "approval.remembered", "tool by"},
    {EventType::kApprovalStanding, "approval.standing", "call_id tool by granted_turn"},
    {EventType::kApprovalRevoked, "approval.revoked", "tool by found"},
    {EventType::kLeaseOpened, "lease.opened", "owner domain expires_at"},
    {EventType::kLeaseReleased, "lease.released", "owner domain reason"},
    {EventType::kLeaseExpired, "lease.expired", "owner domain"},
    {EventType::kPlan, "plan", "steps"},
    {EventType::kPlanInvalid, "plan.invalid", "attempt error"},
    {EventType::kPlanFallback, "plan.fallback", "reason"},
    {EventType::kPlanResumed, "plan.resumed", "step"},
    {EventType::kPlanAbandoned, "plan.abandoned", "step"},
    {EventType::kPlanStepStarted, "plan.step.started", "step stepType requiredTools resumed"},
    {EventType::kPlanStepRetry, "plan.step.retry", "step missing retry"},
    {EventType::kPlanStepFinished, "plan.step.finished", "step status validationStatus requiredTools actualToolCalls"},
    {EventType::kIntentMissing, "intent.missing", "intent missing enforcement retry"},
    {EventType::kActRetry, "act.retry", "tool mode sentence"},
    {EventType::kActMissing, "act.missing", "tool mode sentence reason"},
    {EventType::kAudit, "audit", "repair reason verdict missing unknown_ui error"},
    {EventType::kAuditError, "audit_error", "attempt error"},
    {EventType::kRailFired, "rail.fired", "rail before after"},
    {EventType::kHonestClaimsCorrected, "honest_claims.corrected", "tool"},
    {EventType::kSafetyOverride, "safety.override", "pattern flag_tool"},
    {EventType::kUntrustedViolation, "untrusted.violation", REINS_CALL_FIELDS "kind arguments outcome"},
    {EventType::kUntrustedOverflow, "untrusted.overflow", "count limit"},
    {EventType::kUnknown, "unknown", ""},
};

#undef REINS_CALL_FIELDS

namespace trace_detail {
constexpr bool SpecsInOrder() {
  for (size_t i = 0; i < std::size(kEventSpecs); ++i) {
    if (static_cast<size_t>(kEventSpecs[i].type) != i) return false;
  }
  return static_cast<size_t>(EventType::kUnknown) + 1 == std::size(kEventSpecs);
}
static_assert(SpecsInOrder(), "kEventSpecs lists every EventType once, in declaration order");

// Not constexpr: reaching it while compiling an EventName is the error message.
void UnknownEventName();
}  // namespace trace_detail

constexpr std::string_view EventTypeName(EventType type) { return kEventSpecs[static_cast<size_t>(type)].name; }

// kUnknown for a name no event has.
constexpr EventType EventTypeFromName(std::string_view name) {
  for (const EventSpec& spec : kEventSpecs) {
    if (spec.name == name && spec.type != EventType::kUnknown) return spec.type;
  }
  return EventType::kUnknown;
}

constexpr const EventSpec& SpecOf(EventType type) { return kEventSpecs[static_cast<size_t>(type)]; }

// An event type named by a string literal, resolved while compiling; a name that is not
// in kEventSpecs does not compile.
struct EventName {
  consteval EventName(const char* name) : type(EventTypeFromName(name)) {  // NOLINT: implicit by design
    if (type == EventType::kUnknown) trace_detail::UnknownEventName();
  }
  EventType type;
};

constexpr bool operator==(EventType a, EventName b) { return a == b.type; }

// An event's data: one JSON value (an object, for every event reins writes), held as
// its compact text. A turn keeps its events until it is committed and handed back: as
// text an event's data is one block, where a JSON value is a node per member (a turn
// waiting on its model held about 3 KB of them), and the store writes the text as it
// is instead of serialising the value at the commit. The block is behind one pointer,
// its length first: an event is 24 bytes where a std::string made it 48, and a turn
// waiting on its model holds a vector of them with room for twice as many as it has.
//
// Reading parses: json() once, then read the value. value() and contains() parse on
// each call, for a check that reads a field or two.
class EventData {
 public:
  EventData() = default;  // {}
  EventData(const Json& value);  // NOLINT: implicit, so Emit(type, JsonObject(...)) reads as before
  EventData(Json::initializer_list_t members) : EventData(Json(members)) {}  // {{"text", t}}
  EventData(const EventData& other) : block_(other.block_ ? Copy(other.text()) : nullptr) {}
  EventData(EventData&&) noexcept = default;
  EventData& operator=(const EventData& other) {
    if (this != &other) block_ = other.block_ ? Copy(other.text()) : nullptr;
    return *this;
  }
  EventData& operator=(EventData&&) noexcept = default;

  // Text reins wrote itself (JsonObjectText): valid, compact JSON, kept as given, in a
  // block of its size.
  static EventData FromText(std::string_view compact_json);

  std::string_view text() const {
    if (!block_) return "{}";
    uint32_t size;
    std::memcpy(&size, block_.get(), sizeof size);
    return {block_.get() + sizeof size, size};
  }
  Json json() const;

  bool is_object() const { return text().starts_with('{'); }
  bool contains(std::string_view key) const;
  template <typename Fallback>
  auto value(std::string_view key, Fallback&& fallback) const {
    return json().value(key, std::forward<Fallback>(fallback));
  }

  // The same JSON value: equal texts, or texts whose values are equal.
  friend bool operator==(const EventData& a, const EventData& b) { return a.text() == b.text() || a.json() == b.json(); }

 private:
  // The text's length (4 bytes), then the text; null for "{}". No event's text reaches
  // 4 GB: a turn's whole trace is one SQLite value, and SQLite keeps none over 1 GB.
  static std::unique_ptr<char[]> Copy(std::string_view text);
  std::unique_ptr<char[]> block_;
};

struct TraceEvent {
  EventType type = EventType::kUnknown;
  int turn = 0;  // 1-based turn number within the session
  int64_t at_ms = 0;
  EventData data;

  std::string_view name() const { return EventTypeName(type); }
};

Json TraceEventToJson(const TraceEvent& e);
TraceEvent TraceEventFromJson(const Json& j);

}  // namespace reins

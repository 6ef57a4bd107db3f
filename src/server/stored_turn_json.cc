#include "server/stored_turn_json.h"

#include "domain/timeline.h"
#include "reins/clock.h"

namespace reins {

Json StoredTurnJson(const StoredTurn& t, const std::vector<StoredInvocation>& invocations) {
  Json j = t.result.is_object() ? t.result : Json::object();
  Json tools = Json::array();
  for (const StoredInvocation& inv : invocations) {
    if (inv.turn_id != t.turn_id) continue;
    Json jt = {{"name", inv.name}, {"args", inv.args}, {"status", inv.status}};
    if (!inv.reason.empty()) jt["reason"] = inv.reason;
    if (inv.success) {
      jt["success"] = *inv.success;
      jt["next_action"] = inv.next_action;
      jt["latency_ms"] = inv.latency_ms;
    }
    tools.push_back(std::move(jt));
  }
  j["tools"] = std::move(tools);
  return j;
}

Json TraceTurnJson(const StoredTurn& t, const std::vector<StoredInvocation>& invocations) {
  Json j = StoredTurnJson(t, invocations);
  j["turn_number"] = t.turn_number;
  j["speaker"] = t.speaker;
  j["input"] = t.input;
  j["created_at"] = FormatIsoTime(t.created_at_ms);
  Json events = Json::array();
  for (const TraceEvent& e : t.events) events.push_back(TraceEventToJson(e));
  j["events"] = std::move(events);
  return j;
}

Json TimelineTurnJson(const StoredTurn& t) {
  Json j = TurnTimeline({t.turn_number, t.speaker, SaidText(t.input), t.status, t.reply, &t.events});
  j["turn_id"] = t.turn_id;
  j["created_at"] = FormatIsoTime(t.created_at_ms);
  return j;
}

Json SessionSummaryJson(const SessionSummary& s) {
  Json j = {{"session_id", s.id}, {"created_at", FormatIsoTime(s.created_at_ms)}, {"turns", s.turn_count}};
  if (!s.metadata.empty()) j["metadata"] = s.metadata;
  if (s.lease) {
    j["lease"] = {{"owner", s.lease->owner}, {"domain", s.lease->domain}, {"expires_at", FormatIsoTime(s.lease->expires_at_ms)}};
  }
  if (!s.pending_clarification.is_null()) j["pending_clarification"] = s.pending_clarification;
  if (!s.pending_approval.is_null()) j["pending_approval"] = s.pending_approval;
  if (!s.remembered_approvals.empty()) j["remembered_approvals"] = s.remembered_approvals;
  if (!s.last_status.empty()) j["status"] = s.last_status;
  return j;
}

}  // namespace reins

#include "eval/stored_trace.h"

namespace reins {
namespace {

TurnInput InputFromJson(const Json& j) {
  TurnInput in;
  if (!j.is_object()) return in;
  in.speaker = j.value("speaker", "user");
  if (j.contains("say") && j["say"].is_string()) in.say = j["say"].get<std::string>();
  if (j.contains("select") && j["select"].is_string()) in.select = j["select"].get<std::string>();
  if (j.contains("approve")) {
    if (Result<ApprovalAnswer> a = ApprovalAnswerFromJson(j["approve"]); a.ok()) in.approve = std::move(a).value();
  }
  in.cancel = j.value("cancel", false);
  in.revoke = j.value("revoke", "");
  return in;
}

TurnStatus StatusFromName(const std::string& name) {
  for (TurnStatus s : {TurnStatus::kCompleted, TurnStatus::kAwaitingClarification, TurnStatus::kAwaitingApproval,
                       TurnStatus::kBlocked, TurnStatus::kCancelled, TurnStatus::kFailed}) {
    if (TurnStatusName(s) == name) return s;
  }
  return TurnStatus::kFailed;
}

}  // namespace

std::vector<TurnRun> TurnRunsFromTrace(const Json& trace) {
  std::vector<TurnRun> runs;
  const Json turns = trace.is_object() ? trace.value("turns", Json::array()) : Json::array();
  for (const Json& t : turns) {
    if (!t.is_object()) continue;
    TurnRun run;
    run.number = t.value("turn_number", static_cast<int>(runs.size()) + 1);
    run.input = InputFromJson(t.value("input", Json::object()));
    const Json result = t.value("result", Json::object());
    run.result.turn_id = t.value("turn_id", "");
    run.result.turn_number = run.number;
    run.result.status = StatusFromName(result.value("status", ""));
    run.result.reply = result.value("reply", "");
    for (const Json& e : t.value("events", Json::array())) run.result.events.push_back(TraceEventFromJson(e));
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace reins

#include "eval/scenario_run.h"

#include "domain/timeline.h"

namespace reins {
namespace {

Json CheckToJson(const CheckResult& c) {
  Json j = {{"check", c.kind}, {"expected", c.expected}, {"passed", c.passed}};
  if (!c.detail.empty()) j["detail"] = c.detail;
  if (!c.dimension.empty()) j["dimension"] = c.dimension;
  if (!c.critical.empty()) j["critical"] = c.critical;
  return j;
}

}  // namespace

Json RunTranscript(const ScenarioRun& run) {
  Json turns = Json::array();
  for (const TurnRun& t : run.turns) {
    const std::string said = SaidText(TurnInputToJson(t.input));  // "(chose u_doe)" and the like
    Json jt = {{"turn", t.number}, {"speaker", t.input.speaker}, {"input", said}};
    if (t.refused) {
      jt["status"] = "refused";
      jt["reply"] = t.refusal;
    } else {
      jt["status"] = TurnStatusName(t.result.status);
      jt["reply"] = t.result.reply;
      Json tools = Json::array();
      for (const ToolOutcome& o : t.result.tools) {
        Json tool = {{"name", o.name}, {"status", ToolOutcomeStatusName(o.status)}, {"args", o.args}};
        if (!o.reason.empty()) tool["reason"] = o.reason;
        if (o.result && !o.result->success) tool["failed"] = o.result->error;
        tools.push_back(std::move(tool));
      }
      jt["tools"] = std::move(tools);
      if (!t.result.notices.empty()) jt["notices"] = t.result.notices;
      jt["timeline"] = TurnTimeline({t.number, t.input.speaker, said,
                                     std::string(TurnStatusName(t.result.status)), t.result.reply, &t.result.events});
    }
    Json failed = Json::array();
    for (const CheckResult& c : t.checks) {
      if (!c.passed) failed.push_back(CheckToJson(c));
    }
    jt["failed_checks"] = std::move(failed);
    turns.push_back(std::move(jt));
  }
  Json finals = Json::array();
  for (const CheckResult& c : run.final_checks) {
    if (!c.passed) finals.push_back(CheckToJson(c));
  }
  Json violations = Json::array();
  for (const InvariantViolation& v : run.violations) violations.push_back(v.id + " turn " + std::to_string(v.turn) + ": " + v.message);
  Json harms = Json::array();
  for (const Harm& h : run.harms) harms.push_back(h.kind + " turn " + std::to_string(h.turn) + ": " + h.detail);
  Json j = {{"turns", std::move(turns)}, {"failed_final_checks", std::move(finals)}, {"violations", std::move(violations)},
            {"harms", std::move(harms)}};
  if (!run.greeting.empty()) j["greeting"] = run.greeting;
  if (!run.error.empty()) j["error"] = run.error;
  return j;
}

void ModelUsage::Add(const ModelUsage& other) {
  calls += other.calls;
  input_tokens += other.input_tokens;
  output_tokens += other.output_tokens;
  if (other.cost_usd) cost_usd = cost_usd.value_or(0) + *other.cost_usd;
  call_ms.insert(call_ms.end(), other.call_ms.begin(), other.call_ms.end());
}

int ScenarioRun::ChecksPassed() const {
  int n = 0;
  for (const TurnRun& t : turns) {
    for (const CheckResult& c : t.checks) n += c.passed;
  }
  for (const CheckResult& c : final_checks) n += c.passed;
  return n;
}

int ScenarioRun::ChecksFailed() const {
  int n = 0;
  for (const TurnRun& t : turns) {
    for (const CheckResult& c : t.checks) n += !c.passed;
  }
  for (const CheckResult& c : final_checks) n += !c.passed;
  return n;
}

void DetectorTally::Add(bool detected, bool injected) {
  if (detected && injected) ++true_positive;
  else if (detected) ++false_positive;
  else if (injected) ++false_negative;
  else ++true_negative;
}

void DetectorTally::Add(const DetectorTally& other) {
  true_positive += other.true_positive;
  false_positive += other.false_positive;
  false_negative += other.false_negative;
  true_negative += other.true_negative;
}

Json ScenarioRunToJson(const ScenarioRun& run, bool with_trace) {
  Json turns = Json::array();
  for (const TurnRun& t : run.turns) {
    Json jt = {{"turn", t.number}, {"input", TurnInputToJson(t.input)}};
    if (t.refused) jt["refused"] = t.refusal;
    else jt["result"] = TurnResultToJson(t.result);
    Json checks = Json::array();
    for (const CheckResult& c : t.checks) checks.push_back(CheckToJson(c));
    jt["checks"] = std::move(checks);
    if (with_trace) {
      Json events = Json::array();
      for (const TraceEvent& e : t.result.events) events.push_back(TraceEventToJson(e));
      jt["events"] = std::move(events);
    }
    turns.push_back(std::move(jt));
  }
  Json finals = Json::array();
  for (const CheckResult& c : run.final_checks) finals.push_back(CheckToJson(c));
  Json violations = Json::array();
  for (const InvariantViolation& v : run.violations) {
    violations.push_back({{"invariant", v.id}, {"turn", v.turn}, {"message", v.message}});
  }
  Json harms = Json::array();
  for (const Harm& h : run.harms) harms.push_back({{"harm", h.kind}, {"turn", h.turn}, {"detail", h.detail}});
  Json j = {{"id", run.id},
            {"title", run.title},
            {"file", run.file},
            {"session_id", run.session_id},
            {"greeting", run.greeting},
            {"passed", run.Passed()},
            {"checks_passed", run.ChecksPassed()},
            {"checks_failed", run.ChecksFailed()},
            {"turns", std::move(turns)},
            {"final", std::move(finals)},
            {"invariant_violations", std::move(violations)},
            {"harms", std::move(harms)}};
  if (!run.error.empty()) j["error"] = run.error;
  if (!run.model.empty()) {
    j["model"] = run.model;
    j["model_usage"] = {{"calls", run.usage.calls},
                        {"input_tokens", run.usage.input_tokens},
                        {"output_tokens", run.usage.output_tokens},
                        {"cost_usd", run.usage.cost_usd ? Json(*run.usage.cost_usd) : Json()}};
  }
  return j;
}

}  // namespace reins

#include "eval/scenario_run.h"

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
            {"invariant_violations", std::move(violations)}};
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

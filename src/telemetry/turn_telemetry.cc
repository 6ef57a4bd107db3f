#include "telemetry/turn_telemetry.h"

#include "telemetry/turn_spans.h"

namespace reins::telemetry {

TurnTelemetry::TurnTelemetry(TelemetryOptions options, std::shared_ptr<OtlpExporter> exporter)
    : options_(std::move(options)), exporter_(std::move(exporter)) {}

void TurnTelemetry::OnEvent(const std::string& session_id, const TraceEvent& e) {
  if (e.type == EventType::kTurnStarted) {
    OpenTurn& turn = open_[session_id];
    turn = OpenTurn{};
    turn.skipped = !exporter_->accepting();
    if (!turn.skipped) turn.events.push_back(e);
    return;
  }
  if (e.type == EventType::kDeferredExecuted) {
    if (!exporter_->accepting()) return exporter_->CountSkipped(1);
    const std::string turn = session_id + "#" + std::to_string(e.turn);
    auto parent = parents_.find(turn);
    const TurnIds ids = IdsOfTurn(session_id, e.turn, parent == parents_.end() ? "" : parent->second);
    exporter_->Export({SpanOfDeferredRun(ids, session_id, e, options_.capture_content)});
    return;
  }
  auto open = open_.find(session_id);
  if (open == open_.end()) return;  // a notice or a lease change outside a turn: no span
  if (open->second.skipped) {
    const bool span = e.type == EventType::kModelResponse || e.type == EventType::kModelError ||
                      e.type == EventType::kToolExecuted;
    open->second.spans += span ? 1 : 0;
    if (e.type == EventType::kTurnCompleted) {
      exporter_->CountSkipped(open->second.spans);
      open_.erase(open);
    }
    return;
  }
  open->second.events.push_back(e);
  if (e.type != EventType::kTurnCompleted) return;
  TurnTrace trace{session_id, options_.agent, options_.provider, std::move(open->second.events), options_.capture_content};
  open_.erase(open);
  const Json input = trace.events.front().data.value("input", Json::object());
  if (const std::string traceparent = input.value("traceparent", ""); !traceparent.empty()) {
    Remember(session_id + "#" + std::to_string(trace.events.front().turn), traceparent);
  }
  exporter_->Export(SpansOfTurn(trace));
}

void TurnTelemetry::Remember(const std::string& turn, const std::string& traceparent) {
  if (parents_.emplace(turn, traceparent).second) remembered_.push_back(turn);
  while (remembered_.size() > kRemembered) {
    parents_.erase(remembered_.front());
    remembered_.pop_front();
  }
}

}  // namespace reins::telemetry

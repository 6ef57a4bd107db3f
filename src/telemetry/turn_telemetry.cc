#include "telemetry/turn_telemetry.h"

#include "telemetry/turn_spans.h"

namespace reins::telemetry {
namespace {

// The spans a turn makes: its own, one per model call and one per executed tool call.
int64_t SpansIn(const std::vector<TraceEvent>& events) {
  int64_t spans = 1;
  for (const TraceEvent& e : events) {
    spans += e.type == EventType::kModelResponse || e.type == EventType::kModelError || e.type == EventType::kToolExecuted;
  }
  return spans;
}

}  // namespace

TurnTelemetry::TurnTelemetry(TelemetryOptions options, std::shared_ptr<OtlpExporter> exporter)
    : options_(std::move(options)), exporter_(std::move(exporter)) {}

void TurnTelemetry::OnTurn(const std::string& session_id, const std::vector<TraceEvent>& events) {
  if (!exporter_->accepting()) return exporter_->CountSkipped(SpansIn(events));
  const TurnTrace trace{session_id, options_.agent, options_.provider, events, options_.capture_content};
  for (const TraceEvent& e : events) {
    if (e.type != EventType::kTurnStarted) continue;
    if (std::string traceparent = TurnTraceparent(e); !traceparent.empty()) {
      Remember(session_id + "#" + std::to_string(e.turn), std::move(traceparent));
    }
    break;
  }
  exporter_->Export(SpansOfTurn(trace));
}

void TurnTelemetry::OnEvent(const std::string& session_id, const TraceEvent& e) {
  if (e.type != EventType::kDeferredExecuted) return;  // the turn's own events came with OnTurn
  if (!exporter_->accepting()) return exporter_->CountSkipped(1);
  const std::string turn = session_id + "#" + std::to_string(e.turn);
  std::string traceparent;
  {
    std::lock_guard lock(mu_);
    if (auto parent = parents_.find(turn); parent != parents_.end()) traceparent = parent->second;
  }
  const TurnIds ids = IdsOfTurn(session_id, e.turn, traceparent);
  exporter_->Export({SpanOfDeferredRun(ids, session_id, e, options_.capture_content)});
}

void TurnTelemetry::Remember(const std::string& turn, std::string traceparent) {
  std::lock_guard lock(mu_);
  if (parents_.emplace(turn, std::move(traceparent)).second) remembered_.push_back(turn);
  while (remembered_.size() > kRemembered) {
    parents_.erase(remembered_.front());
    remembered_.pop_front();
  }
}

}  // namespace reins::telemetry

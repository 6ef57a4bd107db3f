// TurnTelemetry: the runtime's durable events as OpenTelemetry spans. Fed every event
// once it is durable (RuntimeParts::on_event, on the runtime's executor): a turn's
// events are gathered from turn.started to turn.completed and handed to the exporter as
// spans (turn_spans.h); a deferred write that runs after its turn becomes a span of its
// own, under the turn's span. Building spans costs the turn microseconds; sending them
// is the exporter's thread's business.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "reins/trace.h"
#include "telemetry/otlp_exporter.h"

namespace reins::telemetry {

struct TelemetryOptions {
  std::string agent;     // gen_ai.agent.name
  std::string provider;  // gen_ai.provider.name
  bool capture_content = false;
};

class TurnTelemetry {
 public:
  TurnTelemetry(TelemetryOptions options, std::shared_ptr<OtlpExporter> exporter);
  // Not thread-safe: call from the runtime's executor only, as on_event is.
  void OnEvent(const std::string& session_id, const TraceEvent& e);
  OtlpExporter& exporter() { return *exporter_; }

 private:
  void Remember(const std::string& turn, const std::string& traceparent);

  TelemetryOptions options_;
  std::shared_ptr<OtlpExporter> exporter_;
  std::map<std::string, std::vector<TraceEvent>> open_;  // session -> its turn's events so far
  // The traceparent of recent turns ("session#turn"), so that a deferred run's span joins
  // its turn's trace; the oldest is forgotten beyond kRemembered.
  std::unordered_map<std::string, std::string> parents_;
  std::deque<std::string> remembered_;
  static constexpr size_t kRemembered = 10000;
};

}  // namespace reins::telemetry

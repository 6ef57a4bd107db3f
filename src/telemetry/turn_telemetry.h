// TurnTelemetry: the runtime's durable events as OpenTelemetry spans. A committed turn's
// events come all at once (RuntimeParts::on_turn, on the runtime's executor) and are
// handed to the exporter as spans (turn_spans.h), read in place; a deferred write that
// runs after its turn (RuntimeParts::on_event) becomes a span of its own, under the
// turn's span. Building spans costs the turn microseconds; sending them is the
// exporter's thread's business. While the collector is unreachable (the exporter's
// backoff), no span is built: they are only counted as dropped, so a dead collector
// costs a turn next to nothing.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
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
  // From any thread (turns of sessions on different strands): only the remembered
  // traceparents are shared, under a mutex held for a lookup or an insert.
  void OnTurn(const std::string& session_id, const std::vector<TraceEvent>& events);
  void OnEvent(const std::string& session_id, const TraceEvent& e);
  OtlpExporter& exporter() { return *exporter_; }

 private:
  void Remember(const std::string& turn, std::string traceparent);

  TelemetryOptions options_;
  std::shared_ptr<OtlpExporter> exporter_;
  // The traceparent of recent turns ("session#turn"), so that a deferred run's span joins
  // its turn's trace; the oldest is forgotten beyond kRemembered.
  std::mutex mu_;
  std::unordered_map<std::string, std::string> parents_;  // under mu_
  std::deque<std::string> remembered_;                    // under mu_
  static constexpr size_t kRemembered = 10000;
};

}  // namespace reins::telemetry

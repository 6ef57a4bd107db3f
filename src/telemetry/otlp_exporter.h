// OtlpExporter: sends spans to an OpenTelemetry collector over OTLP/HTTP with the JSON
// encoding (POST {endpoint}/v1/traces), batched, from a thread of its own. Export()
// only moves spans into a bounded queue: a slow or dead collector never slows the
// caller (a turn); what does not fit, or what the collector refused, is dropped and
// counted (reins serve shows the counts in /metrics).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "telemetry/otlp_json.h"
#include "telemetry/span.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace reins::telemetry {

struct ExporterOptions {
  // Where spans are POSTed: the traces URL (http://host:4318/v1/traces).
  std::string endpoint;
  std::vector<HttpHeaderField> headers;  // OTEL_EXPORTER_OTLP_HEADERS
  // What OTEL_EXPORTER_OTLP_HEADERS held that is not a header (a name that is not an
  // HTTP token, a value with control bytes, a pair without '='): left out, and said once
  // at start by whoever starts the exporter.
  std::vector<std::string> refused_headers;
  // Where the exporter says that exports began to fail (once each time the collector
  // goes from answering to not) and that they work again; stderr when empty.
  std::function<void(const std::string&)> warn;
  Resource resource;
  size_t max_queue = 2048;  // spans waiting; beyond it new spans are dropped
  size_t max_batch = 512;   // spans per request
  int flush_interval_ms = 1000;  // a partial batch waits at most this long
  int timeout_ms = 10000;        // one export request, connect included
};

struct ExportCounts {
  int64_t exported = 0;
  int64_t dropped_queue_full = 0;
  int64_t dropped_export_failed = 0;
  int64_t dropped_collector_down = 0;  // not built, or not sent, while the collector was unreachable
};

class OtlpExporter {
 public:
  explicit OtlpExporter(ExporterOptions options);
  // Sends what is queued, then stops; once a send fails while stopping, the rest is
  // dropped (a dead collector holds shutdown up for one timeout at most).
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Any thread; never blocks on the network.
  void Export(std::vector<Span> spans);
  // False for a while after a send failed (1 s, doubling up to 30 s while it keeps
  // failing): spans made meanwhile would only be dropped, so their makers skip them and
  // count them here instead. Any thread.
  bool accepting() const;
  void CountSkipped(int64_t spans) { dropped_collector_down_ += spans; }
  ExportCounts counts() const;
  // Sends what is queued now and waits until it is sent or failed (tests, shutdown).
  void Flush();
  const ExporterOptions& options() const { return options_; }

 private:
  void Run();
  bool Send(boost::asio::io_context& io, HttpClient& client, std::vector<Span> batch);  // false: dropped
  void Warn(const std::string& line) const;

  const ExporterOptions options_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Span> queue_;  // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  bool flushing_ = false;   // guarded by mu_: send what is queued now, then clear it
  std::atomic<int64_t> exported_{0}, dropped_queue_full_{0}, dropped_export_failed_{0}, dropped_collector_down_{0};
  std::atomic<int64_t> down_until_ms_{0};  // steady clock; 0: up
  int failures_ = 0;                        // sends failed in a row (the sender's thread only)
  bool failing_ = false;                    // the last send failed, and that was said (Warn)
  std::thread thread_;  // last: started once everything above exists
};

// The exporter's options from the agent's `telemetry:` settings and the standard
// variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces URL as is), else
// OTEL_EXPORTER_OTLP_ENDPOINT or the config's otlp_endpoint (a base URL: /v1/traces is
// appended); OTEL_EXPORTER_OTLP_HEADERS (k=v,k2=v2, values percent-decoded);
// OTEL_SERVICE_NAME, else the config's service_name, else the agent's name. A variable
// wins over the file, so that an operator's environment points every service at its
// collector. `endpoint` "" when nothing names a collector: telemetry is off.
using GetEnv = const char* (*)(const char*);
ExporterOptions ExporterOptionsFrom(const std::string& config_endpoint, const std::string& config_service,
                                    const std::string& agent_name, GetEnv getenv);

}  // namespace reins::telemetry

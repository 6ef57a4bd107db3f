// Api: the endpoints of `reins serve` (docs/http-api.md) over a Runtime. Requests are
// routed on the canonical path the transport checked, authenticated (Bearer keys,
// tenants) on that same path, rate limited, validated (request_bodies.h) and handled.
// A turn runs on the event loop of the connection that brought it (reins serve runs
// one loop per thread: EventLoops in net/io_threads.h), so sessions run in parallel on
// the threads and each session's turns one at a time, in order (the runtime's session
// queue); whole traces are read on a reader thread of their own so that they never
// hold up turns. Every error is {"error":{"code","message"}} with the fitting
// status, and nothing is half-applied: a refused request changes nothing.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "reins/runtime.h"
#include "server/http_server.h"
#include "server/keys.h"
#include "server/metrics.h"

namespace reins {

struct ApiOptions {
  double rate_per_second = 20;  // per API key
  double rate_burst = 40;
  int heartbeat_ms = 15000;     // SSE comment lines on idle streams
  int max_inflight = 10000;     // turns running at once; beyond it 503 with Retry-After
  int max_trace_reads = 4;      // trace, timeline and session-list reads at once per tenant; beyond it 429
  // Browser pages of these origins may call (--allow-origin); without keys, these Host
  // names are answered besides loopback's (--allow-host). request_rules.h, CheckBrowser.
  std::vector<std::string> allowed_origins, allowed_hosts;
  // Connections open now (the transport's count), for /metrics; may be empty.
  std::function<int()> open_connections;
  // Sets the metrics other parts keep (the span exporter's counts) before /metrics is
  // rendered; may be empty.
  std::function<void(Metrics&)> collect_metrics;
};

class Api {
 public:
  // `keys` null: no authentication (the server then listens on loopback only).
  // `first_loop`: the executor of the first event loop, where work that must not
  // interleave with itself runs (a tenant's quota: its count and create).
  Api(Runtime& runtime, boost::asio::any_io_executor first_loop, std::shared_ptr<const KeyStore> keys,
      Metrics& metrics, ApiOptions options);
  ~Api();

  Task<void> Handle(const ServerRequest& request, ServerResponse& response);
  // Wired to RuntimeParts::on_event: feeds metrics and session event streams.
  // Called on the event loop of the session's turn; any thread.
  void OnRuntimeEvent(const std::string& session_id, const TraceEvent& event);
  // An event another replica produced (the store's EventRelay): to this replica's
  // event streams of the session only; its metrics were counted where it happened.
  void OnPeerEvent(const std::string& session_id, const TraceEvent& event);
  // From now on new requests get 503 and event streams end.
  void BeginShutdown();

  // The handlers and their shared state (server/api_impl.h); named here so that the
  // route table can point at its handlers.
  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace reins

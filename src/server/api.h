// Api: the endpoints of `reins serve` (docs/http-api.md) over a Runtime. Requests are
// authenticated (Bearer keys, tenants), rate limited, validated, and routed; runtime
// work runs on one strand (the runtime assumes one executor), network I/O on any
// thread. Every error is {"error":{"code","message"}} with the fitting status, and
// nothing is half-applied: a refused request changes nothing.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "reins/runtime.h"
#include "server/http_server.h"
#include "server/keys.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"

namespace reins {

struct ApiOptions {
  double rate_per_second = 20;  // per API key
  double rate_burst = 40;
  int heartbeat_ms = 15000;     // SSE comment lines on idle streams
};

class Api {
 public:
  // `keys` null: no authentication (the server then listens on loopback only).
  Api(Runtime& runtime, boost::asio::any_io_executor runtime_strand, std::shared_ptr<const KeyStore> keys,
      Metrics& metrics, ApiOptions options);
  ~Api();

  Task<void> Handle(const ServerRequest& request, ServerResponse& response);
  // Wired to RuntimeParts::on_event: feeds metrics and session event streams.
  // Called on the runtime strand.
  void OnRuntimeEvent(const std::string& session_id, const TraceEvent& event);
  // From now on new requests get 503 and event streams end.
  void BeginShutdown();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace reins

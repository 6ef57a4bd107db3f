// Retry policy for calls to model providers and other upstreams: which failures are
// worth another try and how long to wait before it.
//
// Retried: HTTP 429, 500, 502, 503, 504, 529 (overloaded), and transport failures
// before any byte of the response was read (kUnavailable). Never retried: any other
// status (400, 401, 403, 404, 422...), timeouts, or a response cut part-way (its
// text may already have reached the user). An `x-should-retry: false|true` header
// from the server overrides the status rule, as the official SDKs do.
//
// Delay: the server's `retry-after-ms`, else `Retry-After` (seconds or HTTP date),
// capped at max_delay_ms; else exponential backoff base·2^attempt with full jitter.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "net/http_client.h"

namespace reins {

struct RetryPolicy {
  int max_retries = 3;
  int base_delay_ms = 500;
  int max_delay_ms = 30000;
};

bool IsRetryableHttpStatus(int status);
// Whether a finished exchange should be tried again (attempt limits aside).
bool ShouldRetry(const Result<HttpResponse>& outcome);
// The server's requested wait, if it named one. `now_ms` resolves an HTTP date.
std::optional<int64_t> RetryAfterMs(const HttpResponse& response, int64_t now_ms);
// How long to wait before retry number `attempt` (0 = the first retry).
int64_t RetryDelayMs(const RetryPolicy& policy, int attempt, const Result<HttpResponse>& outcome, int64_t now_ms,
                     std::mt19937_64& rng);

}  // namespace reins

#include "net/retry.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <string>

namespace reins {
namespace {

std::optional<int64_t> ParseInt(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;  // Retry-After may be fractional in the wild ("1.5")
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return static_cast<int64_t>(value * 1000);
}

// "Wed, 21 Oct 2026 07:28:00 GMT" -> ms since the epoch.
std::optional<int64_t> ParseHttpDateMs(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

}  // namespace

bool IsRetryableHttpStatus(int status) {
  switch (status) {
    case 429: case 500: case 502: case 503: case 504: case 529: return true;
    default: return false;
  }
}

bool ShouldRetry(const Result<HttpResponse>& outcome) {
  if (!outcome.ok()) return outcome.status().code() == StatusCode::kUnavailable;
  const HttpResponse& r = *outcome;
  if (r.status >= 200 && r.status < 300) return false;
  std::string hint = r.Header("x-should-retry");
  if (hint == "true") return true;
  if (hint == "false") return false;
  return IsRetryableHttpStatus(r.status);
}

std::optional<int64_t> RetryAfterMs(const HttpResponse& response, int64_t now_ms) {
  if (std::string ms = response.Header("retry-after-ms"); !ms.empty()) {
    if (auto v = ParseInt(ms)) return *v / 1000;
  }
  std::string after = response.Header("retry-after");
  if (after.empty()) return std::nullopt;
  if (auto seconds = ParseInt(after)) return *seconds;
  if (auto when = ParseHttpDateMs(after)) return std::max<int64_t>(0, *when - now_ms);
  return std::nullopt;
}

int64_t RetryDelayMs(const RetryPolicy& policy, int attempt, const Result<HttpResponse>& outcome, int64_t now_ms,
                     std::mt19937_64& rng) {
  if (outcome.ok()) {
    if (auto asked = RetryAfterMs(*outcome, now_ms)) return std::min<int64_t>(*asked, policy.max_delay_ms);
  }
  int64_t ceiling = std::min<int64_t>(policy.max_delay_ms, int64_t{policy.base_delay_ms} << std::min(attempt, 20));
  // Equal jitter (half fixed, half random): clients that failed together do not
  // retry together.
  std::uniform_int_distribution<int64_t> pick(ceiling / 2, ceiling);
  return pick(rng);
}

}  // namespace reins

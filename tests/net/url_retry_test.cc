#include <gtest/gtest.h>

#include "net/retry.h"
#include "net/url.h"

namespace reins {
namespace {

TEST(ParseUrl, SplitsTheParts) {
  auto u = ParseUrl("https://API.example.com/v1/chat?x=1#frag");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "api.example.com");
  EXPECT_EQ(u->port, "443");
  EXPECT_EQ(u->target, "/v1/chat?x=1");
  EXPECT_TRUE(u->tls());
  auto local = ParseUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->port, "8080");
  EXPECT_EQ(local->target, "/");
  EXPECT_EQ(local->Origin(), "http://127.0.0.1:8080");
  auto v6 = ParseUrl("http://[::1]:9/x");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "9");
}

TEST(ParseUrl, RefusesWhatItCannotUse) {
  EXPECT_FALSE(ParseUrl("api.example.com/v1").ok());
  EXPECT_FALSE(ParseUrl("ftp://example.com").ok());
  EXPECT_FALSE(ParseUrl("http://user:pw@example.com").ok());
  EXPECT_FALSE(ParseUrl("http://example.com:x/").ok());
  EXPECT_FALSE(ParseUrl("http:///path").ok());
}

HttpResponse WithStatus(int status, std::vector<HttpHeaderField> headers = {}) {
  HttpResponse r;
  r.status = status;
  for (const HttpHeaderField& h : headers) r.AddHeader(h.name, h.value);
  return r;
}

TEST(Retry, RetriesOnlyTransientFailures) {
  for (int s : {429, 500, 502, 503, 504, 529}) EXPECT_TRUE(ShouldRetry(WithStatus(s))) << s;
  for (int s : {200, 400, 401, 403, 404, 422}) EXPECT_FALSE(ShouldRetry(WithStatus(s))) << s;
  EXPECT_TRUE(ShouldRetry(Result<HttpResponse>(Unavailable("reset before any byte"))));
  EXPECT_FALSE(ShouldRetry(Result<HttpResponse>(Aborted("cut mid-stream"))));
  EXPECT_FALSE(ShouldRetry(Result<HttpResponse>(DeadlineExceeded("slow"))));
  // The server's own hint wins.
  EXPECT_FALSE(ShouldRetry(WithStatus(503, {{"X-Should-Retry", "false"}})));
  EXPECT_TRUE(ShouldRetry(WithStatus(409, {{"x-should-retry", "true"}})));
}

TEST(Retry, HonoursRetryAfterInEveryForm) {
  EXPECT_EQ(RetryAfterMs(WithStatus(429, {{"Retry-After", "2"}}), 0), 2000);
  EXPECT_EQ(RetryAfterMs(WithStatus(429, {{"retry-after-ms", "150"}, {"Retry-After", "9"}}), 0), 150);
  // Wed, 21 Oct 2026 07:28:00 GMT is 1792567680 s after the epoch.
  EXPECT_EQ(RetryAfterMs(WithStatus(429, {{"Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT"}}), 1792567677000), 3000);
  EXPECT_EQ(RetryAfterMs(WithStatus(429, {{"Retry-After", "soon"}}), 0), std::nullopt);
  EXPECT_EQ(RetryAfterMs(WithStatus(429), 0), std::nullopt);
}

TEST(Retry, BacksOffExponentiallyWithJitterAndCaps) {
  RetryPolicy p{.max_retries = 5, .base_delay_ms = 100, .max_delay_ms = 1000};
  std::mt19937_64 rng(1);
  Result<HttpResponse> busy = WithStatus(503);
  for (int attempt = 0; attempt < 6; ++attempt) {
    int64_t ceiling = std::min<int64_t>(1000, 100 << attempt);
    for (int i = 0; i < 50; ++i) {
      int64_t d = RetryDelayMs(p, attempt, busy, 0, rng);
      EXPECT_GE(d, ceiling / 2);
      EXPECT_LE(d, ceiling);
    }
  }
  // Retry-After is obeyed but capped.
  EXPECT_EQ(RetryDelayMs(p, 0, WithStatus(429, {{"Retry-After", "60"}}), 0, rng), 1000);
  EXPECT_EQ(RetryDelayMs(p, 0, WithStatus(429, {{"Retry-After", "0.25"}}), 0, rng), 250);
}

}  // namespace
}  // namespace reins

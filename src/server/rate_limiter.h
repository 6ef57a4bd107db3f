// RateLimiter: a token bucket per key (an API key's hash), thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace reins {

class RateLimiter {
 public:
  RateLimiter(double tokens_per_second, double burst) : rate_(tokens_per_second), burst_(burst) {}
  // 0 when the request may go ahead (a token was taken); otherwise the milliseconds
  // until a token is available (for Retry-After), and nothing is taken.
  int64_t Acquire(const std::string& key, int64_t now_ms);

 private:
  struct Bucket {
    double tokens;
    int64_t at_ms;
  };
  double rate_;
  double burst_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace reins

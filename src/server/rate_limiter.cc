#include "server/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace reins {

int64_t RateLimiter::Acquire(const std::string& key, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst_, now_ms});
  Bucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst_, b.tokens + static_cast<double>(now_ms - b.at_ms) * rate_ / 1000.0);
    b.at_ms = now_ms;
  }
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    return 0;
  }
  if (rate_ <= 0) return 60000;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil((1.0 - b.tokens) * 1000.0 / rate_)));
}

}  // namespace reins

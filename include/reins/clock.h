// Clock: the one source of time for the runtime. Production uses SystemClock; the
// scenario runner uses VirtualClock so that leases, latencies and timestamps are
// deterministic. Times are milliseconds since the Unix epoch.
//
// Thread-safety: VirtualClock is safe to read from several threads; Advance() is
// expected from the thread driving the scenario.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "reins/async.h"

namespace reins {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
  // Waits `ms`. VirtualClock advances its time instead of waiting.
  virtual Task<void> Sleep(int64_t ms) = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override;
  Task<void> Sleep(int64_t ms) override;
};

class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(int64_t start_ms) : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  Task<void> Sleep(int64_t ms) override;
  void Advance(int64_t ms) { now_ms_ += ms; }

 private:
  std::atomic<int64_t> now_ms_;
};

// "2026-01-01T12:00:00Z" <-> ms since epoch. Parse returns false on malformed input.
std::string FormatIsoTime(int64_t ms);
bool ParseIsoTime(const std::string& text, int64_t* ms);

}  // namespace reins

// Clock: the one source of time for the runtime. Production uses SystemClock; the
// scenario runner uses VirtualClock so that leases, latencies, timeouts and timestamps
// are deterministic. Times are milliseconds since the Unix epoch.
//
// Thread-safety: SystemClock is safe everywhere. VirtualClock is a discrete-event
// clock for one io_context driven by one thread (RunVirtual).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "reins/async.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace reins {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
  // Waits `ms`. VirtualClock advances its time instead of waiting. A cancelled sleep
  // returns early, without an exception.
  virtual Task<void> Sleep(int64_t ms) = 0;
  // Real I/O in progress (a subprocess, a socket) that simulated time must wait for:
  // VirtualClock does not jump ahead while any is open. Use RealWorkScope.
  virtual void BeginRealWork() {}
  virtual void EndRealWork() {}
};

class RealWorkScope {
 public:
  explicit RealWorkScope(Clock& clock) : clock_(clock) { clock_.BeginRealWork(); }
  ~RealWorkScope() { clock_.EndRealWork(); }
  RealWorkScope(const RealWorkScope&) = delete;
  RealWorkScope& operator=(const RealWorkScope&) = delete;

 private:
  Clock& clock_;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override;
  Task<void> Sleep(int64_t ms) override;
};

// Simulated time. Sleep() suspends until the driver reaches its deadline; nothing
// ever waits for real. RunVirtual() runs the io_context and, whenever no handler is
// ready, jumps the clock to the earliest sleeper and wakes it. Sleeps honour asio
// cancellation, so `co_await (work || clock.Sleep(timeout))` behaves as with real time.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(int64_t start_ms) : now_ms_(start_ms) {}
  ~VirtualClock() override;
  int64_t NowMs() const override { return now_ms_; }
  Task<void> Sleep(int64_t ms) override;
  void Advance(int64_t ms) { now_ms_ += ms; }
  void BeginRealWork() override { ++real_work_; }
  void EndRealWork() override { --real_work_; }

  // Runs `io` until it has no work left, advancing virtual time as needed.
  void RunVirtual(boost::asio::io_context& io);

 private:
  struct Sleeper;
  int64_t now_ms_;
  uint64_t next_seq_ = 0;
  int real_work_ = 0;
  // (deadline, arrival order) -> sleeper: ties wake in the order they slept.
  std::map<std::pair<int64_t, uint64_t>, std::shared_ptr<Sleeper>> sleepers_;
};

// Keeps the kernel's timer from being set again for every deadline. Asio sets it (a
// system call) whenever a new deadline is the earliest pending, and each model call arms
// one of tens of seconds that is cancelled when the call returns: with nothing else
// pending, every one is the earliest. A TimerFloor holds a timer that always expires
// within the next `period_ms`, so that none is: one wake-up a period instead of a system
// call per call (docs/PERFORMANCE.md, rounds 7 and 19). For a program whose io_context
// runs for long, a service embedding reins or `reins serve`: the floor is work for the
// io_context, whose run() returns only once the floor is stopped. Stop() and the
// destructor run on the io_context's thread (or while it does not run); the io_context
// must outlive the floor, as any of its timers.
class TimerFloor {
 public:
  explicit TimerFloor(const boost::asio::any_io_executor& executor, int64_t period_ms = 1000);
  ~TimerFloor();
  TimerFloor(const TimerFloor&) = delete;
  TimerFloor& operator=(const TimerFloor&) = delete;
  // Lets the floor go: its timer is cancelled and not set again.
  void Stop();

 private:
  struct State;
  static void SetAgain(const std::shared_ptr<State>& state);
  std::shared_ptr<State> state_;
};

// "2026-01-01T12:00:00Z" <-> ms since epoch. Parse returns false on malformed input.
std::string FormatIsoTime(int64_t ms);
bool ParseIsoTime(const std::string& text, int64_t* ms);

}  // namespace reins

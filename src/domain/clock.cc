#include "reins/clock.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace reins {

int64_t SystemClock::NowMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Task<void> SystemClock::Sleep(int64_t ms) {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  timer.expires_after(std::chrono::milliseconds(ms));
  // A cancelled sleep (the race `work || clock.Sleep(timeout)` that the work won, every
  // model and tool call) ends quietly, as VirtualClock's does: throwing operation_aborted
  // there cost an unwind per call, ~6% of a turn's instructions.
  co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

// A sleeper waits on a timer that never expires by itself: the driver cancels it when
// virtual time reaches the deadline; any other cancellation is the caller's (a race
// lost to another operation) and just removes the sleeper.
struct VirtualClock::Sleeper {
  explicit Sleeper(boost::asio::any_io_executor ex) : timer(ex, boost::asio::steady_timer::time_point::max()) {}
  boost::asio::steady_timer timer;
};

VirtualClock::~VirtualClock() = default;

Task<void> VirtualClock::Sleep(int64_t ms) {
  auto key = std::make_pair(now_ms_ + (ms > 0 ? ms : 0), next_seq_++);
  auto sleeper = std::make_shared<Sleeper>(co_await boost::asio::this_coro::executor);
  sleepers_.emplace(key, sleeper);
  co_await sleeper->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  sleepers_.erase(key);  // no-op when the driver woke us
}

void VirtualClock::RunVirtual(boost::asio::io_context& io) {
  while (true) {
    io.restart();
    io.poll();
    if (!sleepers_.empty() && real_work_ == 0) {
      // Nothing is ready: jump to the earliest deadline and wake that sleeper.
      auto first = sleepers_.begin();
      now_ms_ = std::max(now_ms_, first->first.first);
      std::shared_ptr<Sleeper> sleeper = first->second;
      sleepers_.erase(first);
      sleeper->timer.cancel();
      continue;
    }
    if (io.stopped()) return;  // no work left at all
    io.restart();
    io.run_one();  // real (non-virtual) work is pending: wait for it
  }
}

std::string FormatIsoTime(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool ParseIsoTime(const std::string& text, int64_t* ms) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != static_cast<int>(text.size())) {
    return false;
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return false;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  *ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  return true;
}

}  // namespace reins

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
  // A cancelled sleep (the race `work || clock.Sleep(timeout)` that the work won: a call
  // to a model or tool that does not keep its own deadline) ends quietly, as
  // VirtualClock's does: throwing operation_aborted there cost an unwind per call, ~6%
  // of a turn's instructions.
  co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

struct TimerFloor::State {
  State(const boost::asio::any_io_executor& executor, int64_t period) : timer(executor), period_ms(period) {}
  boost::asio::steady_timer timer;
  int64_t period_ms;
};

// The wait holds the state weakly: a floor destroyed while its cancelled wait is still
// queued leaves nothing for the wait to touch.
void TimerFloor::SetAgain(const std::shared_ptr<State>& state) {
  state->timer.expires_after(std::chrono::milliseconds(state->period_ms));
  state->timer.async_wait([weak = std::weak_ptr(state)](const boost::system::error_code& ec) {
    if (ec) return;  // stopped
    if (std::shared_ptr<State> alive = weak.lock()) SetAgain(alive);
  });
}

TimerFloor::TimerFloor(const boost::asio::any_io_executor& executor, int64_t period_ms)
    : state_(std::make_shared<State>(executor, period_ms)) {
  SetAgain(state_);
}

TimerFloor::~TimerFloor() { Stop(); }

void TimerFloor::Stop() {
  if (state_) state_->timer.cancel();
  state_.reset();
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
  // Gone however the sleep ends (a no-op when the driver woke it): also when its
  // coroutine is destroyed unfinished, its io_context gone, whose timer the driver must
  // then never touch.
  struct Leave {
    decltype(sleepers_)& sleepers;
    decltype(key) at;
    ~Leave() { sleepers.erase(at); }
  } leave{sleepers_, key};
  co_await sleeper->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
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

namespace {

std::string FormatIsoTimeByStrftime(std::time_t secs) {
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

// The date from the count of days since 1970 (H. Hinnant's civil_from_days), so that a
// log line does not pay for gmtime and strftime (about 1.7 k instructions, and every
// request's line has a time). Years outside 1000-9999 go the library's way (strftime
// writes fewer than four digits below 1000).
std::string FormatIsoTime(int64_t ms) {
  const int64_t secs = ms / 1000;  // towards zero, as before
  int64_t days = secs / 86400;
  int64_t in_day = secs % 86400;
  if (in_day < 0) {
    in_day += 86400;
    --days;
  }
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 1000 || year > 9999) return FormatIsoTimeByStrftime(static_cast<std::time_t>(secs));
  char text[] = "0000-00-00T00:00:00Z";
  auto put = [&text](int at, int64_t value, int digits) {
    for (int i = at + digits - 1; i >= at; --i, value /= 10) text[i] = static_cast<char>('0' + value % 10);
  };
  put(0, year, 4);
  put(5, month, 2);
  put(8, day, 2);
  put(11, in_day / 3600, 2);
  put(14, in_day / 60 % 60, 2);
  put(17, in_day % 60, 2);
  return std::string(text, sizeof text - 1);
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

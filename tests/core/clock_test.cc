#include "reins/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>

#include "support/run_sync.h"

namespace reins {
namespace {

using namespace boost::asio::experimental::awaitable_operators;
using testing::RunSync;

TEST(VirtualClockTest, SleepJumpsTimeWithoutWaiting) {
  VirtualClock clock(1000);
  auto body = [&]() -> Task<int64_t> {
    co_await clock.Sleep(250);
    co_return clock.NowMs();
  };
  EXPECT_EQ(RunSync(body(), &clock), 1250);
}

TEST(VirtualClockTest, ARaceEndsAtTheEarlierDeadlineAndCancelsTheOther) {
  VirtualClock clock(0);
  auto body = [&]() -> Task<size_t> {
    auto winner = co_await (clock.Sleep(5000) || clock.Sleep(300));
    co_return winner.index();
  };
  EXPECT_EQ(RunSync(body(), &clock), 1u);
  EXPECT_EQ(clock.NowMs(), 300);  // the cancelled 5 s sleep did not move time
}

TEST(VirtualClockTest, ASleepWhoseCoroutineIsDestroyedUnfinishedIsForgotten) {
  VirtualClock clock(0);
  {
    boost::asio::io_context io;
    auto sleep = [](VirtualClock& c) -> Task<void> { co_await c.Sleep(60000); };
    boost::asio::co_spawn(io, sleep(clock), boost::asio::detached);
    io.poll();
  }  // the io_context goes with the sleep suspended in it
  // The next run neither wakes nor waits for it: time moves to this sleep alone.
  auto body = [&]() -> Task<int64_t> {
    co_await clock.Sleep(100);
    co_return clock.NowMs();
  };
  EXPECT_EQ(RunSync(body(), &clock), 100);
  EXPECT_EQ(clock.NowMs(), 100) << "time never jumped to the forgotten sleep's deadline";
}

TEST(VirtualClockTest, ConcurrentSleepersWakeInDeadlineOrder) {
  VirtualClock clock(0);
  std::vector<int> order;
  auto sleeper = [&](int id, int64_t ms) -> Task<void> {
    co_await clock.Sleep(ms);
    order.push_back(id);
  };
  auto body = [&]() -> Task<int> {
    co_await (sleeper(1, 30) && sleeper(2, 10) && sleeper(3, 20));
    co_return 0;
  };
  RunSync(body(), &clock);
  EXPECT_EQ(order, (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(clock.NowMs(), 30);
}

// FormatIsoTime computes the date itself; gmtime and strftime are the reference.
TEST(ClockTest, IsoTimeIsWhatStrftimeWrites) {
  auto reference = [](int64_t ms) {
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(buf);
  };
  std::vector<int64_t> cases = {0, -1, -999, -1000, -1001, 999, 1000, 86399999, 86400000, -86400000, -86400001,
                                951782400000,   // 2000-02-29
                                4107542399999,  // 2100-02-28T23:59:59.999
                                4107542400000,  // 2100-03-01 (2100 is not a leap year)
                                253402300799999,   // 9999-12-31T23:59:59.999
                                253402300800000,   // 10000-01-01: the library's way
                                -30610224000000,   // 1000-01-01
                                -30610224000001,   // 999-12-31T23:59:59.999: the library's way
                                -62167219200000,   // 0-01-01
                                -62167219200001};  // before year 0
  for (int64_t ms = -5'000'000'000'000; ms < 5'000'000'000'000; ms += 7'777'777'777) cases.push_back(ms);
  for (int64_t day = 0; day < 3 * 366; ++day) cases.push_back(day * 86'400'000 + 1'700'000'000'000 + day * 997);
  for (int64_t ms : cases) EXPECT_EQ(FormatIsoTime(ms), reference(ms)) << ms;
}

TEST(ClockTest, IsoTimeRoundTrips) {
  int64_t ms = 0;
  ASSERT_TRUE(ParseIsoTime("2026-01-01T12:00:45Z", &ms));
  EXPECT_EQ(FormatIsoTime(ms), "2026-01-01T12:00:45Z");
  EXPECT_FALSE(ParseIsoTime("2026-13-01T12:00:00Z", &ms));
  EXPECT_FALSE(ParseIsoTime("2026-01-01 12:00:00", &ms));
  EXPECT_FALSE(ParseIsoTime("2026-01-01T12:00:00Zjunk", &ms));
}

TEST(TimerFloorTest, SetsItselfAgainForAsLongAsItIsHeld) {
  boost::asio::io_context io;
  TimerFloor floor(io.get_executor(), /*period_ms=*/5);
  // Six periods: a floor set only once would have let run_for return, its work done.
  io.run_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(io.stopped()) << "the floor lapsed after its first period";
  floor.Stop();
  io.run();  // the cancelled wait, then nothing: returns
  EXPECT_TRUE(io.stopped());
}

TEST(TimerFloorTest, StoppedItLetsRunReturnWithoutWaitingItsPeriod) {
  boost::asio::io_context io;
  TimerFloor floor(io.get_executor(), /*period_ms=*/60'000);
  SystemClock clock;
  auto work = [&]() -> Task<void> {
    co_await clock.Sleep(10);
    floor.Stop();
  };
  boost::asio::co_spawn(io, work(), boost::asio::detached);
  const auto start = std::chrono::steady_clock::now();
  io.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(TimerFloorTest, DestroyedWithItsWaitStillQueuedLeavesNothingBehind) {
  boost::asio::io_context io;
  { TimerFloor floor(io.get_executor(), /*period_ms=*/5); }  // its cancelled wait is queued, not run
  io.run();  // runs the wait's handler after the floor is gone (ASan: no use after free)
  EXPECT_TRUE(io.stopped());
}

}  // namespace
}  // namespace reins

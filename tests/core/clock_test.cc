#include "reins/clock.h"

#include <gtest/gtest.h>

#include <boost/asio/experimental/awaitable_operators.hpp>

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

TEST(ClockTest, IsoTimeRoundTrips) {
  int64_t ms = 0;
  ASSERT_TRUE(ParseIsoTime("2026-01-01T12:00:45Z", &ms));
  EXPECT_EQ(FormatIsoTime(ms), "2026-01-01T12:00:45Z");
  EXPECT_FALSE(ParseIsoTime("2026-13-01T12:00:00Z", &ms));
  EXPECT_FALSE(ParseIsoTime("2026-01-01 12:00:00", &ms));
  EXPECT_FALSE(ParseIsoTime("2026-01-01T12:00:00Zjunk", &ms));
}

}  // namespace
}  // namespace reins

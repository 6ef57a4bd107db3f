#include "tools/timed_invoke.h"

#include <gtest/gtest.h>

#include "support/run_sync.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

using testing::RunSync;

// A backend that takes `latency_ms` on the clock and then answers `answer`, keeping its
// deadline or not as told: what InvokeWithin does with each kind.
class SlowBackend final : public ToolBackend {
 public:
  SlowBackend(Clock& clock, int64_t latency_ms, Result<Json> answer, bool keeps)
      : clock_(clock), latency_ms_(latency_ms), answer_(std::move(answer)), keeps_(keeps) {}
  Task<Result<Json>> Invoke(const ToolRequest&) override {
    co_await clock_.Sleep(latency_ms_);
    co_return answer_;
  }
  bool KeepsDeadline() const override { return keeps_; }

 private:
  Clock& clock_;
  int64_t latency_ms_;
  Result<Json> answer_;
  bool keeps_;
};

ToolRequest Within(int64_t timeout_ms) {
  ToolRequest request{"lookup", Json::object(), "s", "t", "k"};
  request.timeout_ms = timeout_ms;
  return request;
}

TEST(InvokeWithinTest, ABackendThatDoesNotKeepItsDeadlineIsCutOffAtTheBudget) {
  VirtualClock clock(1000);
  SlowBackend slow(clock, 800, Json{{"ok", true}}, false);
  auto r = RunSync(InvokeWithin(slow, Within(300), clock), &clock);
  EXPECT_FALSE(r.has_value()) << "the budget ran out first";
  EXPECT_EQ(clock.NowMs(), 1300) << "the call was cancelled, not left to run to 1800";
}

TEST(InvokeWithinTest, AnAnswerInsideTheBudgetIsTheBackendsWhicheverItKeeps) {
  for (bool keeps : {false, true}) {
    VirtualClock clock(0);
    SlowBackend quick(clock, 100, Json{{"ok", true}}, keeps);
    auto r = RunSync(InvokeWithin(quick, Within(300), clock), &clock);
    ASSERT_TRUE(r.has_value());
    ASSERT_TRUE(r->ok());
    EXPECT_EQ(**r, (Json{{"ok", true}}));
    EXPECT_EQ(clock.NowMs(), 100);
  }
}

TEST(InvokeWithinTest, OnlyABackendThatKeepsItsDeadlineSaysTheBudgetRanOutByDeadlineExceeded) {
  VirtualClock clock(0);
  SlowBackend keeps(clock, 10, DeadlineExceeded("timed out"), true);
  EXPECT_FALSE(RunSync(InvokeWithin(keeps, Within(300), clock), &clock).has_value());
  // Any other's DeadlineExceeded is its own failure (an HTTP backend's own timeout),
  // passed on with its words.
  SlowBackend raced(clock, 10, DeadlineExceeded("the server took too long"), false);
  auto r = RunSync(InvokeWithin(raced, Within(300), clock), &clock);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().message(), "the server took too long");
  SlowBackend failing(clock, 10, Unavailable("down"), true);
  auto down = RunSync(InvokeWithin(failing, Within(300), clock), &clock);
  ASSERT_TRUE(down.has_value());
  EXPECT_EQ(down->status().message(), "down");
}

TEST(InvokeWithinTest, AFixtureKeepsItsDeadlineOnTheClock) {
  VirtualClock clock(1000);
  FixtureBackend fixture("lookup", Json::parse(R"([{"result": {"data": 1}, "latency_ms": 800}])"), clock);
  ASSERT_TRUE(fixture.KeepsDeadline());
  EXPECT_FALSE(RunSync(InvokeWithin(fixture, Within(300), clock), &clock).has_value());
  EXPECT_EQ(clock.NowMs(), 1300) << "it stopped at the budget, not at its latency";
  auto on_time = RunSync(InvokeWithin(fixture, Within(800), clock), &clock);
  ASSERT_TRUE(on_time.has_value()) << "a latency equal to the budget is in time";
  ASSERT_TRUE(on_time->ok());
  EXPECT_EQ(clock.NowMs(), 2100);
}

}  // namespace
}  // namespace reins

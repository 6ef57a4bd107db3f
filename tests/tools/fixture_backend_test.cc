#include "tools/fixture_backend.h"

#include <optional>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "reins/envelope.h"
#include "support/run_sync.h"
#include "tools/tool_router.h"

namespace reins {
namespace {

using testing::RunSync;

ToolRequest Call(Json args) { return {"lookup", std::move(args), "s", "t", "k"}; }

TEST(FixtureBackendTest, FirstMatchingEntryAnswersAndTimesRunOut) {
  VirtualClock clock(0);
  FixtureBackend fixture("lookup", Json::parse(R"([
    {"when": {"args": {"query": "John"}}, "result": {"data": "john"}, "times": 1},
    {"when": {"args": {"query": "John"}}, "error": "db down"},
    {"result": {"data": "anyone"}}])"), clock);
  auto first = RunSync(fixture.Invoke(Call({{"query", "John"}, {"limit", 5}})), &clock);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["data"], "john");
  auto second = RunSync(fixture.Invoke(Call({{"query", "John"}})), &clock);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), "db down");
  auto other = RunSync(fixture.Invoke(Call({{"query", "Jane"}})), &clock);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)["data"], "anyone");
  EXPECT_EQ(fixture.calls(), 3);
}

TEST(FixtureBackendTest, LatencyMovesTheVirtualClock) {
  VirtualClock clock(1000);
  FixtureBackend fixture("lookup", Json::parse(R"([{"result": {}, "latency_ms": 250}])"), clock);
  ASSERT_TRUE(RunSync(fixture.Invoke(Call(Json::object())), &clock).ok());
  EXPECT_EQ(clock.NowMs(), 1250);
}

TEST(FixtureBackendTest, ALatencyPastTheCallsBudgetEndsAtTheBudget) {
  VirtualClock clock(1000);
  FixtureBackend fixture("lookup", Json::parse(R"([{"result": {}, "latency_ms": 800}])"), clock);
  ToolRequest call = Call(Json::object());
  call.timeout_ms = 300;
  auto r = RunSync(fixture.Invoke(call), &clock);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(clock.NowMs(), 1300);
}

TEST(FixtureBackendTest, ACancelledCallEndsWithoutItsResult) {
  VirtualClock clock(0);
  FixtureBackend fixture("lookup", Json::parse(R"([{"result": {"data": 1}, "latency_ms": 800}])"), clock);
  boost::asio::io_context io;
  boost::asio::cancellation_signal cancel;
  std::optional<Result<Json>> out;
  auto call = [&]() -> Task<void> { out.emplace(co_await fixture.Invoke(Call(Json::object()))); };
  boost::asio::co_spawn(io, call(), boost::asio::bind_cancellation_slot(cancel.slot(), [](std::exception_ptr e) {
                          if (e) std::rethrow_exception(e);
                        }));
  io.poll();  // asleep on the clock
  cancel.emit(boost::asio::cancellation_type::terminal);
  clock.RunVirtual(io);
  ASSERT_TRUE(out.has_value());
  ASSERT_FALSE(out->ok());
  EXPECT_EQ(out->status().code(), StatusCode::kAborted) << out->status().message();
  EXPECT_EQ(clock.NowMs(), 0);
}

TEST(FixtureBackendTest, NoMatchingEntryIsAnErrorNamingTheArguments) {
  VirtualClock clock(0);
  FixtureBackend fixture("lookup", Json::parse(R"([{"when": {"args": {"query": "John"}}, "result": {}}])"), clock);
  auto r = RunSync(fixture.Invoke(Call({{"query", "Zed"}})), &clock);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(R"({"query":"Zed"})"), std::string::npos);
}

TEST(FixtureBackendTest, SubsetMatchIsRecursiveAndNumericAware) {
  EXPECT_TRUE(JsonSubsetMatch(Json::parse(R"({"a": {"b": 1}})"), Json::parse(R"({"a": {"b": 1.0, "c": 2}, "d": 3})")));
  EXPECT_FALSE(JsonSubsetMatch(Json::parse(R"({"a": {"b": 1}})"), Json::parse(R"({"a": {"c": 1}})")));
  EXPECT_FALSE(JsonSubsetMatch(Json::parse(R"({"a": [1]})"), Json::parse(R"({"a": [1, 2]})")));
  EXPECT_TRUE(JsonSubsetMatch(Json::object(), Json::parse(R"({"x": 1})")));
}

}  // namespace
}  // namespace reins

namespace reins {
namespace {

TEST(BuiltinEchoTest, ReturnsItsArgumentsAsData) {
  AgentConfig config;
  ToolDef echo;
  echo.name = "echo";
  echo.backend.kind = ToolBackendConfig::Kind::kBuiltin;
  echo.backend.spec = "echo";
  config.tools = {echo};
  VirtualClock clock(0);
  ToolRouter router = BuildToolRouter(config, clock);
  ASSERT_NE(router.Find("echo"), nullptr);
  EXPECT_EQ(router.Find("missing"), nullptr);
  auto r = testing::RunSync(router.Find("echo")->Invoke({"echo", {{"text", "hi"}}, "s", "t", "k"}));
  ASSERT_TRUE(r.ok());
  ResultEnvelope e = NormaliseToolResult(*r);
  EXPECT_TRUE(e.success);
  EXPECT_EQ(e.data, (Json{{"text", "hi"}}));
}

}  // namespace
}  // namespace reins

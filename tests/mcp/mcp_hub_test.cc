// The hub between the runtime and the MCP servers: tools exposed from a server, calls
// from another io_context (the runtime's) crossing to the hub's thread and back,
// progress delivered on the caller's side, a caller's cancellation reaching the server
// as notifications/cancelled, and Stop() reaping the server.
#include "mcp/mcp_hub.h"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

namespace reins {
namespace {

using namespace boost::asio::experimental::awaitable_operators;

// GCC 12 rejects string literals in an expression that also co_awaits: names as constants.
const std::string kEcho = "echo";
const std::string kProgress = "progress";
const std::string kSlow = "slow";
const std::string kCancelled = "cancelled";

AgentConfig FakeAgent() {
  AgentConfig config;
  config.name = "hub-test";
  McpServerConfig server;
  server.name = "fake";
  server.command = {"python3", REINS_FAKE_MCP_SERVER};
  server.expose_all = true;
  config.mcp_servers.push_back(server);
  return config;
}

template <typename F>
void Drive(boost::asio::io_context& io, F body) {
  bool done = false;
  boost::asio::co_spawn(io, [&]() -> Task<void> {
    co_await body();
    done = true;
  }, [](std::exception_ptr e) { if (e) std::rethrow_exception(e); });
  io.run();
  io.restart();
  ASSERT_TRUE(done);
}

Task<void> Wait(int ms) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(boost::asio::use_awaitable);
}

TEST(McpHubTest, CallsCrossToTheHubAndBackWithProgressAndCancellation) {
  AgentConfig config = FakeAgent();
  McpHub hub;
  ASSERT_TRUE(McpHub::Needed(config));
  Status started = hub.Start(config);
  ASSERT_TRUE(started.ok()) << started.message();
  EXPECT_NE(config.FindTool("echo"), nullptr);  // expose: all
  SystemClock clock;
  auto backends = hub.Backends(config, clock);
  ASSERT_TRUE(backends.count("progress"));

  boost::asio::io_context runtime;  // the caller's side, as the runtime's io_context
  Drive(runtime, [&]() -> Task<void> {
    ToolRequest echo{"echo", Json{{"message", "hi"}}, "s1", "t1", "k1"};
    Result<Json> echoed = co_await backends.at(kEcho)->Invoke(echo);
    EXPECT_TRUE(echoed.ok()) << echoed.status().message();

    std::vector<Json> progress;
    ToolRequest slow_progress{"progress", Json::object(), "s1", "t1", "k2"};
    slow_progress.on_progress = [&](const Json& p) { progress.push_back(p); };
    Result<Json> done = co_await backends.at(kProgress)->Invoke(slow_progress);
    EXPECT_TRUE(done.ok()) << done.status().message();
    EXPECT_EQ(progress.size(), 2u);  // delivered on this io_context, before the result

    // A deferred call's timeout: the caller gives up, the server hears of it.
    ToolRequest slow{"slow", Json{{"ms", 5000}}, "s1", "t1", "k3"};
    auto raced = co_await (backends.at(kSlow)->Invoke(slow) || Wait(300));
    EXPECT_EQ(raced.index(), 1u);
    ToolRequest ask{"cancelled", Json::object(), "s1", "t1", "k4"};
    Result<Json> cancelled = co_await backends.at(kCancelled)->Invoke(ask);
    EXPECT_TRUE(cancelled.ok()) << cancelled.status().message();
    if (cancelled.ok()) {
      EXPECT_EQ((*cancelled)["data"]["ids"].size(), 1u) << cancelled->dump();
    }
  });
  hub.Stop();
  ToolRequest after{"echo", Json::object(), "s1", "t2", "k5"};
  Drive(runtime, [&]() -> Task<void> {
    Result<Json> refused = co_await backends.at(kEcho)->Invoke(after);
    EXPECT_FALSE(refused.ok());
  });
}

}  // namespace
}  // namespace reins

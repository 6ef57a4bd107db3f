// The MCP client against a scripted stdio server (fake_mcp_server.py): handshake and
// version negotiation, paginated tool lists, out-of-order responses, a malformed line,
// server requests reusing our ids, progress, timeouts with notifications/cancelled, a
// server dying mid-call and being restarted, and shutdown leaving no zombie.
#include "mcp/mcp_client.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "drive.h"

namespace reins {
namespace {

using testing::Drive;

// GCC 12 rejects string literals in an expression that also co_awaits: names as constants.
const std::string kAsk = "ask";
const std::string kCancelled = "cancelled";
const std::string kDie = "die";
const std::string kEcho = "echo";
const std::string kFail = "fail";
const std::string kGarbage = "garbage";
const std::string kPingClient = "ping_client";
const std::string kProgress = "progress";
const std::string kRpcError = "rpc_error";
const std::string kSlow = "slow";

using namespace boost::asio::experimental::awaitable_operators;

McpServerConfig FakeServer(std::vector<std::string> extra = {}) {
  McpServerConfig s;
  s.name = "fake";
  s.command = {"python3", REINS_FAKE_MCP_SERVER};
  for (std::string& e : extra) s.command.push_back(std::move(e));
  return s;
}

bool ProcessExists(pid_t pid) { return pid > 0 && access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0; }

TEST(McpClientTest, HandshakeListsEveryPageOfTools) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), FakeServer());
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    co_await client.Stop();
  });
  EXPECT_EQ(client.protocol_version(), "2025-11-25");
  ASSERT_EQ(client.tools().size(), 12u);  // two pages
  EXPECT_EQ(client.tools()[0].name, "echo");
  EXPECT_EQ(client.tools().back().name, "grow");
}

TEST(McpClientTest, AcceptsAnOlderRevisionAndRefusesAnUnknownOne) {
  boost::asio::io_context io;
  McpClient older(io.get_executor(), FakeServer({"--version", "2025-06-18"}));
  McpClient bogus(io.get_executor(), FakeServer({"--version", "1999-01-01"}));
  Drive(io, [&]() -> Task<void> {
    Status a = co_await older.Start();
    EXPECT_TRUE(a.ok()) << a.message();
    Status b = co_await bogus.Start();
    EXPECT_FALSE(b.ok());
    EXPECT_NE(b.message().find("1999-01-01"), std::string::npos) << b.message();
    co_await older.Stop();
    co_await bogus.Stop();
  });
  EXPECT_EQ(older.protocol_version(), "2025-06-18");
}

TEST(McpClientTest, CallsMapStructuredContentErrorsAndRpcErrors) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), FakeServer());
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    Json args = {{"city", "Oslo"}};
    Result<Json> echo = co_await client.CallTool(kEcho, args);
    EXPECT_TRUE(echo.ok());
    if (echo.ok()) {
      EXPECT_EQ(McpResultToToolResult(*echo)["data"], args);
    }
    Json empty1 = Json::object();
    Result<Json> failed = co_await client.CallTool(kFail, empty1);
    EXPECT_TRUE(failed.ok());
    if (failed.ok()) {
      Json mapped = McpResultToToolResult(*failed);
      EXPECT_EQ(mapped["success"], false);
      EXPECT_EQ(mapped["error"], "it broke");
    }
    Json empty2 = Json::object();
    Result<Json> rpc = co_await client.CallTool(kRpcError, empty2);
    EXPECT_FALSE(rpc.ok());
    if (!rpc.ok()) {
      EXPECT_NE(rpc.status().message().find("-32602"), std::string::npos);
    }
    co_await client.Stop();
  });
}

TEST(McpClientTest, ToleratesOutOfOrderResponsesAndMalformedLines) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), FakeServer());
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    Json slow_args = {{"ms", 300}};
    Json echo_args = {{"n", 1}};
    // The slow call is sent first; the echo answer arrives first.
    auto [slow, echo] = co_await (client.CallTool(kSlow, slow_args) && client.CallTool(kEcho, echo_args));
    EXPECT_TRUE(slow.ok());
    EXPECT_TRUE(echo.ok());
    if (echo.ok()) {
      EXPECT_EQ((*echo)["structuredContent"], echo_args);
    }
    Json empty3 = Json::object();
    Result<Json> after = co_await client.CallTool(kGarbage, empty3);
    EXPECT_TRUE(after.ok());
    if (after.ok()) {
      EXPECT_EQ(McpResultToToolResult(*after)["data"]["after"], "garbage");
    }
    co_await client.Stop();
  });
  EXPECT_EQ(client.malformed_lines(), 1);
}

TEST(McpClientTest, AnswersServerRequestsThatReuseOurIds) {
  boost::asio::io_context io;
  McpClientOptions options;
  Json asked;
  options.on_elicitation = [&](const Json& params) -> Task<Json> {
    asked = params;
    co_return Json{{"action", "accept"}, {"content", {{"color", "blue"}}}};
  };
  McpClient client(io.get_executor(), FakeServer(), options);
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    // The server's elicitation request has id 1, the id of our initialize.
    Json empty4 = Json::object();
    Result<Json> ask = co_await client.CallTool(kAsk, empty4);
    EXPECT_TRUE(ask.ok());
    if (ask.ok()) {
      EXPECT_EQ((*ask)["structuredContent"]["content"]["color"], "blue");
    }
    Json empty5 = Json::object();
    Result<Json> pings = co_await client.CallTool(kPingClient, empty5);
    EXPECT_TRUE(pings.ok());
    if (pings.ok()) {
      EXPECT_EQ((*pings)["structuredContent"]["ping"], Json::object());
      EXPECT_EQ((*pings)["structuredContent"]["roots"]["roots"], Json::array());
    }
    co_await client.Stop();
  });
  EXPECT_EQ(asked.value("message", ""), "Which color?");
}

TEST(McpClientTest, DeclinesElicitationWithoutAHook) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), FakeServer());
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    Json empty6 = Json::object();
    Result<Json> ask = co_await client.CallTool(kAsk, empty6);
    EXPECT_TRUE(ask.ok());
    if (ask.ok()) {
      EXPECT_EQ((*ask)["structuredContent"]["action"], "decline");
    }
    co_await client.Stop();
  });
}

TEST(McpClientTest, ReportsProgressToTheCaller) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), FakeServer());
  std::vector<double> seen;
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    JsonRpcPeer::ProgressFn on_progress = [&](const Json& p) { seen.push_back(p.value("progress", 0.0)); };
    Json empty7 = Json::object();
    Result<Json> r = co_await client.CallTool(kProgress, empty7, on_progress);
    EXPECT_TRUE(r.ok());
    co_await client.Stop();
  });
  EXPECT_EQ(seen, (std::vector<double>{1, 2}));
}

TEST(McpClientTest, TimesOutAndTellsTheServer) {
  boost::asio::io_context io;
  McpClientOptions options;
  options.call_timeout_ms = 100;
  McpClient client(io.get_executor(), FakeServer(), options);
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    // Far past the 100 ms, so a busy machine cannot let the answer come first (the
    // server's thread is a daemon: Stop() does not wait for it).
    Json args = {{"ms", 5000}};
    Result<Json> slow = co_await client.CallTool(kSlow, args);
    EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
    // Only the slow call is to be cut: this one has a minute.
    Json empty8 = Json::object();
    JsonRpcPeer::ProgressFn no_progress;
    Result<Json> cancelled = co_await client.CallTool(kCancelled, empty8, no_progress, 60000);
    EXPECT_TRUE(cancelled.ok());
    if (cancelled.ok()) {
      EXPECT_EQ((*cancelled)["structuredContent"]["ids"].size(), 1u);
    }
    co_await client.Stop();
  });
}

TEST(McpClientTest, ServerDeathFailsTheCallThenRestarts) {
  boost::asio::io_context io;
  std::vector<std::string> log;
  McpClientOptions options;
  options.log = [&](const std::string& line) { log.push_back(line); };
  McpClient client(io.get_executor(), FakeServer(), options);
  pid_t first = 0;
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    first = client.pid();
    Json empty9 = Json::object();
    Result<Json> died = co_await client.CallTool(kDie, empty9);
    EXPECT_EQ(died.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(died.status().message().find("exited with status 7"), std::string::npos) << died.status().message();
    Json args1 = Json{{"ok", true}};
    Result<Json> again = co_await client.CallTool(kEcho, args1);
    EXPECT_TRUE(again.ok()) << again.status().message();
    co_await client.Stop();
  });
  EXPECT_EQ(client.restarts(), 1);
  EXPECT_FALSE(ProcessExists(first)) << "the dead server was not reaped";
}

TEST(McpClientTest, AServerThatWillNotStartBacksOff) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), FakeServer({"--die-on-start"}));
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_FALSE(s.ok());
    Json empty10 = Json::object();
    Result<Json> first = co_await client.CallTool(kEcho, empty10);
    EXPECT_FALSE(first.ok());
    Json empty11 = Json::object();
    Result<Json> second = co_await client.CallTool(kEcho, empty11);  // within the backoff
    EXPECT_NE(second.status().message().find("next restart"), std::string::npos) << second.status().message();
    co_await client.Stop();
  });
}

TEST(McpClientTest, StopAndDestructionLeaveNoZombie) {
  pid_t stopped = 0, dropped = 0;
  {
    boost::asio::io_context io;
    McpClient a(io.get_executor(), FakeServer());
    auto b = std::make_unique<McpClient>(io.get_executor(), FakeServer());
    Drive(io, [&]() -> Task<void> {
      {
      Status started = co_await a.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
      {
      Status started = co_await b->Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
      stopped = a.pid();
      dropped = b->pid();
      co_await a.Stop();
    });
    EXPECT_FALSE(ProcessExists(stopped));
    b.reset();  // never stopped: the destructor kills and reaps
  }
  EXPECT_FALSE(ProcessExists(dropped));
}

// A transport that answers inside send (an HTTP session already closed fails the
// request locally): the call must not wait out its timeout.
TEST(JsonRpcPeerTest, AnAnswerGivenInsideSendIsNotMissed) {
  boost::asio::io_context io;
  std::shared_ptr<JsonRpcPeer> peer;
  peer = std::make_shared<JsonRpcPeer>(io.get_executor(), "inline", [&peer](std::string request) {
    Json sent = Json::parse(request);
    peer->Receive(Json{{"jsonrpc", "2.0"}, {"id", sent["id"]}, {"result", {{"answered", true}}}}.dump());
  });
  bool done = false;
  boost::asio::co_spawn(io, [&]() -> Task<void> {
    const std::string method = "tools/call";
    Result<Json> r = co_await peer->Call(method, Json::object(), 10 * 60 * 1000);
    EXPECT_TRUE(r.ok());
    done = true;
  }, boost::asio::detached);
  io.run_for(std::chrono::seconds(5));  // with the bug it would wait out the 10 minutes
  EXPECT_TRUE(done);
}

TEST(McpResultTest, MapsContentToEnvelopes) {
  Json text_json = Json::parse(R"({"content":[{"type":"text","text":"{\"a\":1}"}]})");
  EXPECT_EQ(McpResultToToolResult(text_json)["data"], Json::parse(R"({"a":1})"));
  Json plain = Json::parse(R"({"content":[{"type":"text","text":"hello"}]})");
  EXPECT_EQ(McpResultToToolResult(plain)["data"]["text"], "hello");
  Json envelope = Json::parse(R"({"structuredContent":{"success":true,"next_action":"clarification_needed",
    "clarification":{"question":"Which?","options":[{"id":"a","title":"A"}]}}})");
  EXPECT_EQ(McpResultToToolResult(envelope)["next_action"], "clarification_needed");
  Json image = Json::parse(R"({"content":[{"type":"image","data":"AAA","mimeType":"image/png"}]})");
  EXPECT_EQ(McpResultToToolResult(image)["data"]["content"][0]["type"], "image");
  Json error = Json::parse(R"({"content":[{"type":"text","text":"Access denied"}],"isError":true})");
  EXPECT_EQ(McpResultToToolResult(error)["error"], "Access denied");
}

}  // namespace
}  // namespace reins

// The MCP client over Streamable HTTP against a scripted server
// (fake_mcp_http_server.py): session id and protocol version headers, JSON and SSE
// answers, progress in a stream, a forgotten session initialized again with the call
// sent once more, HTTP errors and a stream that ends unanswered failing only their
// call, DELETE on shutdown.
#include "mcp/mcp_client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "child_server.h"
#include "drive.h"
#include "net/http_client.h"

namespace reins {
namespace {

using testing::Drive;

// GCC 12 rejects string literals in an expression that also co_awaits: names as constants.
const std::string kBoom = "boom";
const std::string kEcho = "echo";
const std::string kForget = "forget";
const std::string kMute = "mute";
const std::string kStream = "stream";

class McpHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::FreePort();
    ASSERT_TRUE(server_.Start({"python3", REINS_FAKE_MCP_HTTP_SERVER, std::to_string(port_)}, {}, port_))
        << "the fake MCP HTTP server did not start";
  }
  std::string Base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  McpServerConfig Config() const {
    McpServerConfig s;
    s.name = "fake-http";
    s.url = Base() + "/mcp";
    s.headers["X-Test"] = "yes";
    return s;
  }
  Task<Json> Stats() {
    HttpRequest r;
    r.method = "GET";
    r.url = Base() + "/stats";
    Result<HttpResponse> got = co_await http_.Send(std::move(r));
    if (!got.ok()) co_return Json();
    co_return Json::parse(got->body, nullptr, false);
  }

  int port_ = 0;
  testing::ChildServer server_;
  HttpClient http_;
};

TEST_F(McpHttpTest, HandshakeCallsAndShutdown) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), Config());
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(client.tools().size(), 5u);
    Json args = Json{{"message", "hi"}};
    Result<Json> plain = co_await client.CallTool(kEcho, args);
    EXPECT_TRUE(plain.ok()) << plain.status().message();
    if (plain.ok()) {
      EXPECT_EQ(McpResultToToolResult(*plain)["data"]["echo"], "hi");
    }

    int progress = 0;
    JsonRpcPeer::ProgressFn on_progress = [&](const Json&) { ++progress; };
    Json args2 = Json{{"message", "streamed"}};
    Result<Json> streamed = co_await client.CallTool(kStream, args2, on_progress);
    EXPECT_TRUE(streamed.ok()) << streamed.status().message();
    if (streamed.ok()) {
      EXPECT_EQ(McpResultToToolResult(*streamed)["data"]["echo"], "streamed");
    }
    EXPECT_EQ(progress, 1);
    co_await client.Stop();

    Json stats = co_await Stats();
    EXPECT_EQ(stats["initializes"], 1);
    EXPECT_EQ(stats["deletes"], 1);
    EXPECT_EQ(stats["not_found"], 0);
    for (const Json& v : stats["versions"]) EXPECT_EQ(v, "2025-11-25");  // on every message after initialize
  });
}

TEST_F(McpHttpTest, AForgottenSessionIsInitializedAgainAndTheCallSentOnceMore) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), Config());
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    Json empty = Json::object();
    Result<Json> forgot = co_await client.CallTool(kForget, empty);
    EXPECT_TRUE(forgot.ok());
    Json args = Json{{"message", "again"}};
    Result<Json> after = co_await client.CallTool(kEcho, args);
    EXPECT_TRUE(after.ok()) << after.status().message();
    if (after.ok()) {
      EXPECT_EQ(McpResultToToolResult(*after)["data"]["echo"], "again");
    }
    co_await client.Stop();

    Json stats = co_await Stats();
    EXPECT_EQ(stats["initializes"], 2);
    EXPECT_EQ(stats["not_found"], 1);
    // The echo that met the 404 was never run; it ran once, on the new session.
    EXPECT_EQ(stats["calls"], Json::parse(R"(["forget","echo"])"));
  });
}

TEST_F(McpHttpTest, HttpErrorsAndUnansweredStreamsFailOnlyTheirCall) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), Config());
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    Json empty = Json::object();
    Result<Json> boom = co_await client.CallTool(kBoom, empty);
    EXPECT_FALSE(boom.ok());
    EXPECT_NE(boom.status().message().find("HTTP 500"), std::string::npos) << boom.status().message();
    Json empty2 = Json::object();
    Result<Json> mute = co_await client.CallTool(kMute, empty2);
    EXPECT_FALSE(mute.ok());
    EXPECT_NE(mute.status().message().find("without answering"), std::string::npos) << mute.status().message();
    Json args = Json{{"message", "fine"}};
    Result<Json> fine = co_await client.CallTool(kEcho, args);
    EXPECT_TRUE(fine.ok()) << fine.status().message();
    co_await client.Stop();
  });
}

TEST_F(McpHttpTest, AServerThatIsGoneFailsFastWithTheReason) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), Config());
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    server_.Kill();
    Json args = Json{{"message", "anyone?"}};
    Result<Json> lost = co_await client.CallTool(kEcho, args);
    EXPECT_EQ(lost.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(lost.status().message().find("127.0.0.1"), std::string::npos) << lost.status().message();
    co_await client.Stop();
  });
}

}  // namespace
}  // namespace reins

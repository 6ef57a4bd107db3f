// The MCP client against real third-party servers from npm (scripts/install-mcp-peers):
// server-memory (structured output), server-filesystem (a real isError) and
// server-everything over stdio and Streamable HTTP (validation errors, structured
// content, progress, elicitation accept and decline, cancellation, a restarted server). Run through tests/mcp/with_peers.sh,
// which installs them or skips; without REINS_MCP_PEERS every test is skipped.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "child_server.h"
#include "drive.h"
#include "mcp/mcp_client.h"

namespace reins {
namespace {

using testing::Drive;

// GCC 12 rejects string literals in an expression that also co_awaits: names as constants.
const std::string kCreateEntities = "create_entities";
const std::string kEcho = "echo";
const std::string kGetStructuredContent = "get-structured-content";
const std::string kGetSum = "get-sum";
const std::string kReadGraph = "read_graph";
const std::string kReadTextFile = "read_text_file";
const std::string kTriggerElicitationRequest = "trigger-elicitation-request";
const std::string kTriggerLongRunningOperation = "trigger-long-running-operation";

std::string Peers() {
  const char* dir = std::getenv("REINS_MCP_PEERS");
  return dir == nullptr ? "" : dir;
}

McpServerConfig Server(const std::string& name, const std::string& package, std::vector<std::string> args = {}) {
  McpServerConfig s;
  s.name = name;
  s.command = {"node", Peers() + "/node_modules/@modelcontextprotocol/" + package + "/dist/index.js"};
  for (std::string& a : args) s.command.push_back(std::move(a));
  return s;
}

bool HasTool(const McpClient& c, const std::string& name) {
  for (const McpTool& t : c.tools()) {
    if (t.name == name) return true;
  }
  return false;
}

class McpPeersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Peers().empty()) GTEST_SKIP() << "REINS_MCP_PEERS is not set (run through tests/mcp/with_peers.sh)";
  }
};

TEST_F(McpPeersTest, MemoryServerGivesStructuredOutput) {
  boost::asio::io_context io;
  std::string file = (std::filesystem::temp_directory_path() / ("reins-memory-" + std::to_string(getpid()) + ".jsonl")).string();
  McpServerConfig server = Server("memory", "server-memory");
  server.env["MEMORY_FILE_PATH"] = file;
  McpClient client(io.get_executor(), server);
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(client.tools().size(), 9u);
    Json args = Json::parse(R"({"entities":[{"name":"Alice","entityType":"person","observations":["likes C++"]}]})");
    Result<Json> created = co_await client.CallTool(kCreateEntities, args);
    EXPECT_TRUE(created.ok());
    if (created.ok()) {
      EXPECT_EQ(McpResultToToolResult(*created)["data"]["entities"][0]["name"], "Alice");
    }
    Json empty1 = Json::object();
    Result<Json> graph = co_await client.CallTool(kReadGraph, empty1);
    EXPECT_TRUE(graph.ok());
    if (graph.ok()) {
      EXPECT_EQ(McpResultToToolResult(*graph)["data"]["entities"].size(), 1u);
    }
    co_await client.Stop();
  });
  std::filesystem::remove(file);
}

TEST_F(McpPeersTest, FilesystemServerRefusesPathsOutsideItsRoot) {
  boost::asio::io_context io;
  std::filesystem::path root = std::filesystem::temp_directory_path() / ("reins-fsroot-" + std::to_string(getpid()));
  std::filesystem::create_directories(root);
  McpClient client(io.get_executor(), Server("files", "server-filesystem", {root.string()}));
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    Json args1 = Json{{"path", "/etc/passwd"}};
    Result<Json> outside = co_await client.CallTool(kReadTextFile, args1);
    EXPECT_TRUE(outside.ok());
    if (outside.ok()) {
      Json mapped = McpResultToToolResult(*outside);
      EXPECT_EQ(mapped["success"], false);
      EXPECT_NE(mapped["error"].get<std::string>().find("Access denied"), std::string::npos) << mapped.dump();
    }
    co_await client.Stop();
  });
  std::filesystem::remove_all(root);
}

// Tools, validation errors, structured content, progress and elicitation: the same
// checks over either transport.
void ExerciseEverything(const McpServerConfig& server) {
  boost::asio::io_context io;
  McpClientOptions options;
  std::string answer = "accept";
  options.on_elicitation = [&](const Json& params) -> Task<Json> {
    EXPECT_TRUE(params.contains("requestedSchema"));
    if (answer == "decline") co_return Json{{"action", "decline"}};
    Json content = Json::object();
    const Json properties = params["requestedSchema"].value("properties", Json::object());
    for (const auto& [field, schema] : properties.items()) {
      if (schema.contains("enum")) content[field] = schema["enum"][0];
      else if (schema.value("type", "") == "string" && schema.value("format", "") == "") content[field] = "reins";
      else if (schema.value("type", "") == "boolean") content[field] = true;
    }
    co_return Json{{"action", "accept"}, {"content", content}};
  };
  McpClient client(io.get_executor(), server, options);
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    // Input validation: a result with isError, not a protocol error.
    Json args2 = Json{{"a", 1}, {"b", "x"}};
    Result<Json> bad = co_await client.CallTool(kGetSum, args2);
    EXPECT_TRUE(bad.ok());
    if (bad.ok()) {
      EXPECT_EQ(McpResultToToolResult(*bad)["success"], false);
      EXPECT_NE((*bad).dump().find("validation"), std::string::npos) << bad->dump();
    }
    Json args3 = Json{{"location", "Chicago"}};
    Result<Json> weather = co_await client.CallTool(kGetStructuredContent, args3);
    EXPECT_TRUE(weather.ok());
    if (weather.ok()) {
      EXPECT_TRUE(McpResultToToolResult(*weather)["data"].contains("temperature")) << weather->dump();
    }

    int progress = 0;
    JsonRpcPeer::ProgressFn on_progress = [&](const Json&) { ++progress; };
    Json args4 = Json{{"duration", 1}, {"steps", 2}};
    Result<Json> longer = co_await client.CallTool(kTriggerLongRunningOperation, args4, on_progress);
    EXPECT_TRUE(longer.ok());
    EXPECT_EQ(progress, 2);

    // The elicitation tool appears after list_changed; the client lists again first.
    EXPECT_TRUE(HasTool(client, "trigger-elicitation-request"));
    Json empty2 = Json::object();
    Result<Json> accepted = co_await client.CallTool(kTriggerElicitationRequest, empty2);
    EXPECT_TRUE(accepted.ok());
    if (accepted.ok()) {
      EXPECT_NE(accepted->dump().find("accept"), std::string::npos) << accepted->dump();
    }
    answer = "decline";
    Json empty3 = Json::object();
    Result<Json> declined = co_await client.CallTool(kTriggerElicitationRequest, empty3);
    EXPECT_TRUE(declined.ok());
    if (declined.ok()) {
      EXPECT_NE(declined->dump().find("decline"), std::string::npos) << declined->dump();
    }
    co_await client.Stop();
  });
}

TEST_F(McpPeersTest, EverythingServerOverStdio) { ExerciseEverything(Server("everything", "server-everything", {"stdio"})); }

// server-everything's Streamable HTTP mode on a free port.
class EverythingOverHttp : public McpPeersTest {
 protected:
  void SetUp() override {
    McpPeersTest::SetUp();
    if (IsSkipped()) return;
    port_ = testing::FreePort();
    StartServer();
  }
  void StartServer() {
    std::vector<std::string> argv = Server("everything", "server-everything", {"streamableHttp"}).command;
    ASSERT_TRUE(server_.Start(argv, {{"PORT", std::to_string(port_)}}, port_)) << "server-everything did not listen";
  }
  McpServerConfig Config() const {
    McpServerConfig s;
    s.name = "everything";
    s.url = "http://127.0.0.1:" + std::to_string(port_) + "/mcp";
    return s;
  }
  int port_ = 0;
  testing::ChildServer server_;
};

TEST_F(EverythingOverHttp, ToolsProgressAndElicitation) { ExerciseEverything(Config()); }

TEST_F(EverythingOverHttp, ARestartedServerGetsANewSession) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), Config());
  Drive(io, [&]() -> Task<void> {
    Status s = co_await client.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    server_.Kill();
    StartServer();  // same port, no memory of the session
    Json args = Json{{"message", "after the restart"}};
    Result<Json> echoed = co_await client.CallTool(kEcho, args);
    EXPECT_TRUE(echoed.ok()) << echoed.status().message();
    if (echoed.ok()) {
      EXPECT_NE(echoed->dump().find("after the restart"), std::string::npos) << echoed->dump();
    }
    EXPECT_EQ(client.restarts(), 1);
    co_await client.Stop();
  });
}

// The short bound is the cut call's own: the calls around it keep the default, which a
// busy machine cannot miss.
TEST_F(EverythingOverHttp, ACallCutByItsTimeoutIsCancelled) {
  boost::asio::io_context io;
  McpClient client(io.get_executor(), Config());
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    Json args = Json{{"duration", 5}, {"steps", 5}};
    JsonRpcPeer::ProgressFn no_progress;
    Result<Json> cut = co_await client.CallTool(kTriggerLongRunningOperation, args, no_progress, 500);
    EXPECT_EQ(cut.status().code(), StatusCode::kDeadlineExceeded);
    Json args2 = Json{{"message", "still here"}};
    Result<Json> after = co_await client.CallTool(kEcho, args2);
    EXPECT_TRUE(after.ok()) << after.status().message();
    co_await client.Stop();
  });
}

TEST_F(McpPeersTest, EverythingServerCallCancelledOnTimeout) {
  boost::asio::io_context io;
  McpClientOptions options;
  options.call_timeout_ms = 500;  // the cut call's; the echo after it has a minute
  McpClient client(io.get_executor(), Server("everything", "server-everything", {"stdio"}), options);
  Drive(io, [&]() -> Task<void> {
    {
      Status started = co_await client.Start();
      EXPECT_TRUE(started.ok()) << started.message();
    }
    Json args5 = Json{{"duration", 5}, {"steps", 5}};
    Result<Json> cut = co_await client.CallTool(kTriggerLongRunningOperation, args5);
    EXPECT_EQ(cut.status().code(), StatusCode::kDeadlineExceeded);
    Json args6 = Json{{"message", "still here"}};
    JsonRpcPeer::ProgressFn no_progress;
    Result<Json> after = co_await client.CallTool(kEcho, args6, no_progress, 60000);  // the session goes on
    EXPECT_TRUE(after.ok()) << after.status().message();
    co_await client.Stop();
  });
}

}  // namespace
}  // namespace reins

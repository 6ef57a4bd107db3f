// AgentHost, the one composition root: MCP tools get their backends from the same
// factory as the config's others, fixtures win over a server's tool, and a server's
// announced tool-list change reaches the runtime's catalog without a turn asking
// for it.
#include "host/agent_host.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "drive.h"
#include "fake_agent.h"
#include "reins/store.h"

namespace reins {
namespace {

const std::string kGrow = "grow";  // (GCC 12: no string literal beside co_await)

class SilentModel final : public ModelProvider {
 public:
  std::string_view Name() const override { return "silent"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest&) override { co_return Unimplemented("not asked in this test"); }
};

AgentConfig FakeAgent() { return testing::FakeAgent("host-test"); }

RuntimeParts Parts() {
  RuntimeParts parts;
  parts.model = std::make_shared<SilentModel>();
  parts.store = std::shared_ptr<Store>(std::move(OpenStore("sqlite::memory:")).value());
  return parts;
}

class Canned final : public ToolBackend {
 public:
  Task<Result<Json>> Invoke(const ToolRequest&) override { co_return Json{{"success", true}, {"data", "canned"}}; }
};

TEST(AgentHostTest, AnAnnouncedToolListChangeReachesTheRuntimeWithoutATurn) {
  Result<std::unique_ptr<AgentHost>> host = AgentHost::Start(FakeAgent(), std::make_shared<SystemClock>());
  ASSERT_TRUE(host.ok()) << host.status().message();
  ASSERT_NE((*host)->agent().FindTool(kGrow), nullptr);  // expose: all
  Result<Runtime*> runtime = (*host)->StartRuntime(Parts());
  ASSERT_TRUE(runtime.ok()) << runtime.status().message();
  EXPECT_EQ((*runtime)->config()->FindTool("extra"), nullptr);

  // `grow` adds a tool and announces it (notifications/tools/list_changed).
  std::shared_ptr<ToolBackend> grow = (*host)->Backends().at(kGrow);
  boost::asio::io_context io;
  testing::Drive(io, [&]() -> Task<void> {
    ToolRequest request{kGrow, Json::object(), "s1", "t1", "k1"};
    Result<Json> grown = co_await grow->Invoke(request);
    EXPECT_TRUE(grown.ok()) << grown.status().message();
  });
  (*host)->AwaitCatalog();  // no turn, no poll: the hub listed again when it was told
  EXPECT_NE((*runtime)->config()->FindTool("extra"), nullptr);
}

TEST(AgentHostTest, AnOverrideWinsOverTheServersTool) {
  HostOptions options;
  options.overrides[kGrow] = std::make_shared<Canned>();
  Result<std::unique_ptr<AgentHost>> host = AgentHost::Start(FakeAgent(), std::make_shared<SystemClock>(), options);
  ASSERT_TRUE(host.ok()) << host.status().message();
  EXPECT_EQ((*host)->Backends().at(kGrow), options.overrides[kGrow]);
}

TEST(AgentHostTest, AServerThatCannotStartFailsTheHostSayingWhich) {
  AgentConfig config = FakeAgent();
  config.mcp_servers[0].command = {"/nonexistent/mcp-server"};
  Result<std::unique_ptr<AgentHost>> host = AgentHost::Start(config, std::make_shared<SystemClock>());
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("/nonexistent/mcp-server"), std::string::npos) << host.status().message();
}

}  // namespace
}  // namespace reins

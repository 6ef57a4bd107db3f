// ApplyMcpCatalog: an MCP server's tool list completes the agent config; annotations
// give defaults the config can override; `expose: all` adds the rest.
#include <gtest/gtest.h>

#include "mcp/mcp_hub.h"

namespace reins {
namespace {

McpTool Remote(const std::string& name, Json annotations) {
  McpTool t;
  t.name = name;
  t.title = "Remote " + name;
  t.description = "does " + name;
  t.input_schema = {{"type", "object"}, {"properties", {{"id", {{"type", "string"}}}}}};
  t.annotations = std::move(annotations);
  return t;
}

ToolDef McpToolDef(const std::string& name, Json spec, std::set<std::string> configured = {}) {
  ToolDef t;
  t.name = name;
  t.title = name;
  t.backend.kind = ToolBackendConfig::Kind::kMcp;
  t.backend.spec = std::move(spec);
  t.configured = std::move(configured);
  t.configured.insert({"name", "backend"});
  return t;
}

TEST(McpCatalogTest, FillsConfiguredToolsAndDerivesPolicyFromAnnotations) {
  AgentConfig config;
  config.tools.push_back(McpToolDef("read", {{"server", "s"}}));
  config.tools.push_back(McpToolDef("write", {{"server", "s"}}));
  ToolDef wipe = McpToolDef("wipe", {{"server", "s"}, {"tool", "delete_all"}}, {"approval"});
  wipe.approval.required = false;  // the config says so explicitly
  config.tools.push_back(wipe);
  config.tools.push_back(McpToolDef("drop", {{"server", "s"}, {"tool", "delete_all"}}));
  std::vector<McpTool> remote = {Remote("read", {{"readOnlyHint", true}}), Remote("write", {{"readOnlyHint", false}}),
                                 Remote("delete_all", {{"readOnlyHint", false}, {"destructiveHint", true}})};
  Status s = ApplyMcpCatalog(config, "s", false, remote);
  ASSERT_TRUE(s.ok()) << s.message();
  const ToolDef* read = config.FindTool("read");
  EXPECT_EQ(read->timing, ToolTiming::kImmediate);
  EXPECT_EQ(read->title, "Remote read");
  EXPECT_EQ(read->description, "does read");
  EXPECT_TRUE(read->input_schema["properties"].contains("id"));
  EXPECT_EQ(config.FindTool("write")->timing, ToolTiming::kDeferred);
  EXPECT_FALSE(config.FindTool("write")->approval.required);
  EXPECT_FALSE(config.FindTool("wipe")->approval.required);  // refined by the config
  EXPECT_TRUE(config.FindTool("drop")->approval.required);    // destructiveHint
  EXPECT_EQ(config.tools.size(), 4u);                         // nothing exposed wholesale
}

TEST(McpCatalogTest, ExposeAllAddsTheOtherTools) {
  AgentConfig config;
  config.tools.push_back(McpToolDef("read", {{"server", "s"}}));
  std::vector<McpTool> remote = {Remote("read", {{"readOnlyHint", true}}), Remote("note", Json::object()),
                                 Remote("bad.name", Json::object())};
  Status s = ApplyMcpCatalog(config, "s", true, remote);
  EXPECT_FALSE(s.ok());  // bad.name cannot be a reins tool name without a config entry
  EXPECT_NE(s.message().find("bad.name"), std::string::npos);
  const ToolDef* note = config.FindTool("note");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->backend.spec["tool"], "note");
  EXPECT_EQ(note->timing, ToolTiming::kImmediate);  // no annotation: immediate
  EXPECT_FALSE(note->deferred_instruction.empty());
}

TEST(McpCatalogTest, NamesAToolTheServerDoesNotOffer) {
  AgentConfig config;
  config.tools.push_back(McpToolDef("ghost", {{"server", "s"}}));
  Status s = ApplyMcpCatalog(config, "s", false, {Remote("read", Json::object())});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("offers no tool 'ghost' (it offers: read)"), std::string::npos) << s.message();
}

TEST(McpCatalogTest, ChecksConsumedArgumentsAgainstTheServerSchema) {
  AgentConfig config;
  ToolDef t = McpToolDef("read", {{"server", "s"}});
  t.consumes["person"] = "contact";
  config.tools.push_back(t);
  Status s = ApplyMcpCatalog(config, "s", false, {Remote("read", Json::object())});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'person'"), std::string::npos);
}

}  // namespace
}  // namespace reins

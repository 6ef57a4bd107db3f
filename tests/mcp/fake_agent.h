// An agent whose one MCP server is tests/mcp/fake_mcp_server.py with every tool exposed
// (the test target defines REINS_FAKE_MCP_SERVER).
#pragma once

#include <string>

#include "reins/agent_config.h"

namespace reins::testing {

inline AgentConfig FakeAgent(const std::string& name) {
  AgentConfig config;
  config.name = name;
  McpServerConfig server;
  server.name = "fake";
  server.command = {"python3", REINS_FAKE_MCP_SERVER};
  server.expose_all = true;
  config.mcp_servers.push_back(server);
  return config;
}

}  // namespace reins::testing

// `reins check --pin agent.yaml`: starts the agent's MCP servers, digests every tool
// they list and writes the agent's MCP lock (src/mcp/mcp_pins.h, docs/mcp.md "Pinned
// tools"), saying what differs from the lock it replaces. Without --pin, `reins check`
// reads the lock an agent has (SayMcpLock).
#include <iostream>

#include "cli/commands.h"
#include "cli/term.h"
#include "mcp/mcp_hub.h"
#include "mcp/mcp_pins.h"

namespace reins {

int PinMcpTools(const std::string& file, const AgentConfig& agent, const Term& term) {
  AgentConfig config = agent;  // Start completes it
  if (!McpHub::Needed(config)) {
    std::cout << "   MCP lock: the agent uses no MCP server; nothing to pin\n";
    return 0;
  }
  const std::string path = McpLockPath(file);
  Result<std::optional<McpLock>> before = ReadMcpLock(path);
  if (!before.ok()) before = std::optional<McpLock>();  // a lock that cannot be read is replaced whole
  McpHub hub;  // no lock: each tool as its server lists it now
  if (Status started = hub.Start(config); !started.ok()) {
    std::cerr << file << ": cannot pin the MCP tools: " << started.message();
    return 1;
  }
  McpLock lock;
  int tools = 0;
  for (const auto& [server, listed] : hub.Listed()) {
    std::map<std::string, ToolPin>& pins = lock.servers[server];
    for (const McpTool& tool : listed) {
      pins[tool.name] = ToolPin::Of(tool);
      ++tools;
      if (!*before) continue;
      const std::string change = (*before)->Change(server, tool);
      if (!change.empty()) std::cout << "   " << term.Yellow("repinned") << " " << server << "/" << tool.name << ": " << change << "\n";
    }
  }
  hub.Stop();
  if (Status written = WriteMcpLock(path, lock); !written.ok()) {
    std::cerr << written.message() << "\n";
    return 1;
  }
  std::cout << "   MCP lock: " << path << " pins " << tools << " tools of " << lock.servers.size()
            << " server(s); a tool that later lists otherwise is withheld from the model until pinned again\n";
  return 0;
}

int SayMcpLock(const std::string& file, const AgentConfig& agent) {
  if (!McpHub::Needed(agent)) return 0;
  const std::string path = McpLockPath(file);
  Result<std::optional<McpLock>> lock = ReadMcpLock(path);
  if (!lock.ok()) {
    std::cerr << lock.status().message() << "\n";
    return 1;
  }
  if (!*lock) return 0;
  size_t tools = 0;
  for (const auto& [server, pins] : (*lock)->servers) tools += pins.size();
  std::cout << "   MCP lock: " << path << " pins " << tools
            << " tools; a tool its server lists otherwise at start is withheld from the model\n";
  return 0;
}

}  // namespace reins

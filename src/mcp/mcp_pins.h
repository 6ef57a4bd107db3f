// The MCP lock: what each MCP tool said about itself when a person reviewed it, so a
// server that changes a tool's words afterwards (tool poisoning, a "rug pull") does
// not reach the model with them. `reins check --pin agent.yaml` writes the lock beside
// the agent (agent.mcp-lock.json): per server and tool, the SHA-256 of its
// description, input schema, annotations and title. With a lock, a tool whose digests
// differ, or that the lock does not name, is withheld: listed in the agent, never
// offered to the model, its calls refused (docs/mcp.md "Pinned tools"). No lock file:
// no pinning.
//
//   std::optional<McpLock> lock = ReadMcpLock(McpLockPath("agent.yaml")).value();
//   std::string change = lock->Change("fake", tool);  // "" when it matches
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp/mcp_client.h"
#include "reins/status.h"

namespace reins {

// The digests of one tool as a server listed it (64 hex digits each).
struct ToolPin {
  std::string description;
  std::string input_schema;
  std::string annotations;
  std::string title;

  static ToolPin Of(const McpTool& tool);
  bool operator==(const ToolPin&) const = default;
};

struct McpLock {
  std::map<std::string, std::map<std::string, ToolPin>> servers;  // server -> tool -> pin

  // Why `tool` of `server` is not the tool the lock pinned: "" when it is; else, e.g.,
  // "its description and input schema changed since the lock was written" or "it is
  // not in the lock (new since the lock was written)".
  std::string Change(const std::string& server, const McpTool& tool) const;
  std::string ToJson() const;  // the file's text, stable: sorted, one tool per line
};

// The lock of an agent file: beside it, its extension replaced by ".mcp-lock.json".
std::string McpLockPath(const std::string& agent_file);
// nullopt when `path` does not exist; an error naming the file when it is not a lock.
Result<std::optional<McpLock>> ReadMcpLock(const std::string& path);
Status WriteMcpLock(const std::string& path, const McpLock& lock);

}  // namespace reins

#include "mcp/mcp_pins.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "domain/digest.h"
#include "domain/json_parse.h"

namespace reins {
namespace {

constexpr const char* kFormat = "reins-mcp-lock/1";
// The parts of a pin, in the order a change names them.
constexpr std::pair<const char*, std::string ToolPin::*> kParts[] = {
    {"description", &ToolPin::description},
    {"input_schema", &ToolPin::input_schema},
    {"annotations", &ToolPin::annotations},
    {"title", &ToolPin::title},
};

std::string Said(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return out;
}

bool IsDigest(const Json& v) {
  if (!v.is_string() || v.get_ref<const std::string&>().size() != 64) return false;
  for (char c : v.get_ref<const std::string&>()) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

// A schema or annotations object digests as its JSON with sorted keys (nlohmann's
// std::map), so a server that reorders keys has not changed the tool.
ToolPin ToolPin::Of(const McpTool& tool) {
  return {Sha256Hex(tool.description), Sha256Hex(tool.input_schema.dump()), Sha256Hex(tool.annotations.dump()),
          Sha256Hex(tool.title)};
}

std::string McpLock::Change(const std::string& server, const McpTool& tool) const {
  auto s = servers.find(server);
  const ToolPin* pinned = nullptr;
  if (s != servers.end()) {
    if (auto t = s->second.find(tool.name); t != s->second.end()) pinned = &t->second;
  }
  if (pinned == nullptr) return "it is not in the lock (new since the lock was written)";
  const ToolPin now = ToolPin::Of(tool);
  std::vector<std::string> changed;
  for (const auto& [name, part] : kParts) {
    if (now.*part != pinned->*part) changed.push_back(std::string(name) == "input_schema" ? "input schema" : name);
  }
  if (changed.empty()) return "";
  return "its " + Said(changed) + " changed since the lock was written";
}

std::string McpLock::ToJson() const {
  std::string out = "{\n  \"format\": \"" + std::string(kFormat) + "\",\n  \"servers\": {";
  bool first_server = true;
  for (const auto& [server, tools] : servers) {
    out += std::string(first_server ? "" : ",") + "\n    " + Json(server).dump() + ": {";
    first_server = false;
    bool first_tool = true;
    for (const auto& [name, pin] : tools) {
      Json digests = Json::object();
      for (const auto& [part, member] : kParts) digests[part] = pin.*member;
      out += std::string(first_tool ? "" : ",") + "\n      " + Json(name).dump() + ": " + digests.dump();
      first_tool = false;
    }
    out += tools.empty() ? "}" : "\n    }";
  }
  out += servers.empty() ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

std::string McpLockPath(const std::string& agent_file) {
  std::filesystem::path path(agent_file);
  path.replace_extension(".mcp-lock.json");
  return path.string();
}

Result<std::optional<McpLock>> ReadMcpLock(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::optional<McpLock>();
    return Unavailable(path + ": cannot read the MCP lock");
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string fix = "; write it again with `reins check --pin` on the agent";
  Result<Json> parsed = ParseJson(text.str());
  if (!parsed.ok()) return InvalidArgument(path + ": the MCP lock is not JSON (" + parsed.status().message() + ")" + fix);
  const Json& root = *parsed;
  if (!root.is_object() || root.value("format", "") != kFormat || !root.contains("servers") ||
      !root["servers"].is_object()) {
    return InvalidArgument(path + ": not an MCP lock of this version (expected \"format\": \"" + kFormat +
                           "\" and \"servers\")" + fix);
  }
  McpLock lock;
  for (const auto& [server, tools] : root["servers"].items()) {
    if (!tools.is_object()) return InvalidArgument(path + ": server " + server + " is not an object" + fix);
    std::map<std::string, ToolPin>& pins = lock.servers[server];
    for (const auto& [name, digests] : tools.items()) {
      ToolPin& pin = pins[name];
      for (const auto& [part, member] : kParts) {
        if (!digests.is_object() || !IsDigest(digests.value(part, Json()))) {
          return InvalidArgument(path + ": " + server + "/" + name + " has no SHA-256 digest for " + part + fix);
        }
        pin.*member = digests[part].get<std::string>();
      }
    }
  }
  return std::optional<McpLock>(std::move(lock));
}

// Written beside and renamed over: a reader never sees half a lock.
Status WriteMcpLock(const std::string& path, const McpLock& lock) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << lock.ToJson();
    out.flush();
    if (!out) return Unavailable(partial + ": cannot write the MCP lock");
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::remove(partial.c_str());
    return Unavailable(path + ": cannot write the MCP lock: " + error.message());
  }
  return OkStatus();
}

}  // namespace reins

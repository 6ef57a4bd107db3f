// Loading and validating the agent YAML (docs/agent-config.md) into an AgentConfig.
// Every problem is reported with its position; nothing half-valid is returned.
#pragma once

#include <string>
#include <vector>

#include "config/config_reader.h"
#include "config/diagnostics.h"
#include "config/located_yaml.h"
#include "reins/agent_config.h"
#include "reins/status.h"

namespace reins {

// Reads the agent mapping at `root` of `doc`. Paths in it (system_prompt_file) are
// relative to `base_dir`. Returns false when `diag` gained problems.
bool ParseAgentConfig(const LocatedDoc& doc, const std::string& root, const std::string& base_dir,
                      Diagnostics& diag, AgentConfig* out);

// Loads a file; on problems the Status message holds every "file:line:col: message".
Result<AgentConfig> LoadAgentConfigFile(const std::string& path);

// What is valid but probably not what the author meant (a key that will only record,
// not enforce): `reins check` prints these as warnings.
std::vector<std::string> AgentConfigWarnings(const AgentConfig& config);

// Tool definitions and the fixture-entry format shared with scenario files.
void ParseTools(ConfigReader& r, const std::string& pointer, AgentConfig* out);
// A tool's `approval:` (short or long form) at `tool`/approval, and the rule checked
// against the tool's input schema: its conditions' arguments and types, its prompt's
// placeholders (approval_config_loader.cc).
void ParseApproval(ConfigReader& r, const std::string& tool, ApprovalRule* out);
void CheckApprovalRule(ConfigReader& r, const std::string& tool, const ToolDef& t);
// Validates a scripted model's replies ({when, text | tool_calls | json | raw, repeat}),
// in an agent's model or a scenario's.
void CheckScriptedReplies(ConfigReader& r, const std::string& pointer);
// Validates a list of fixture entries ({when:{args}, result | error, latency_ms, times}).
void CheckFixtureEntries(ConfigReader& r, const std::string& pointer);
// Cross-references between tools, intents, rails and MCP servers.
void CheckToolReferences(ConfigReader& r, const std::string& root, const AgentConfig& config);

// Copies `overlay` (the mapping at overlay_root of overlay_doc) onto the mapping at
// base_root of base: mappings merge key by key, anything else replaces. Marks follow
// the values, so errors in overridden values point into the overlay's file.
void DeepMerge(LocatedDoc& base, const std::string& base_root, const LocatedDoc& overlay_doc,
               const std::string& overlay_root);

}  // namespace reins

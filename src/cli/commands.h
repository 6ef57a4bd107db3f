// The `reins` subcommands. Each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace reins {

struct RunFlags {
  bool json = false;
  bool trace = false;
  std::string store = "sqlite::memory:";
};

struct ChatFlags {
  std::string config;
  std::string provider;  // overrides model.provider
  std::string model;     // overrides model.model
  std::string base_url;  // overrides model.base_url
  std::string speaker = "user";
  std::string store = "sqlite::memory:";
};

int CheckCommand(const std::vector<std::string>& files);
int RunCommand(const std::string& file, const RunFlags& flags);
int EvalCommand(const std::vector<std::string>& paths, double min_pass, bool json);
int TraceCommand(const std::string& store_url, const std::string& session_id, bool json);
int DemoCommand(const std::string& dir);
int ChatCommand(const ChatFlags& flags);

// Scenario files under `paths` (files given directly, or *.yaml found recursively
// whose top level has `turns`), sorted.
std::vector<std::string> FindScenarioFiles(const std::vector<std::string>& paths, std::string* error);

}  // namespace reins

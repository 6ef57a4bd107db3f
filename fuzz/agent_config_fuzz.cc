// An agent YAML file -> the YAML reader (limits included) and the agent config loader.
#include "config/agent_config_loader.h"
#include "fuzz/fuzz_target.h"

namespace reins {

REINS_FUZZ_TARGET(agent_config) {
  Diagnostics diag;
  LocatedDoc doc = ParseYaml(std::string(input), "fuzz.yaml", diag);
  AgentConfig config;
  if (diag.empty()) (void)ParseAgentConfig(doc, "", ".", diag, &config);
  (void)diag.Format();
}

}  // namespace reins

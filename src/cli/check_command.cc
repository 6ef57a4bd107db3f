#include <iostream>

#include "cli/commands.h"
#include "cli/term.h"
#include "config/agent_config_loader.h"
#include "eval/scenario.h"
#include "pipeline/turn_pipeline.h"
#include "policy/registry.h"

namespace reins {

int CheckCommand(const std::vector<std::string>& files, bool pin) {
  Term term = Term::ForStdout();
  int failures = 0;
  for (const std::string& file : files) {
    if (IsScenarioFile(file)) {
      Result<Scenario> s = LoadScenarioFile(file);
      if (s.ok()) {
        std::cout << term.Green("ok") << " " << file << "  scenario " << s->id << ", " << s->turns.size() << " turns\n";
        continue;
      }
      std::cerr << s.status().message();
    } else {
      Result<AgentConfig> a = LoadAgentConfigFile(file);
      if (a.ok()) {
        std::string mcp;  // the servers' tool lists are only known once they run
        if (!a->mcp_servers.empty()) {
          mcp = ", " + std::to_string(a->mcp_servers.size()) + " MCP server(s), checked against their tool lists at start";
        }
        std::cout << term.Green("ok") << " " << file << "  agent " << a->name << ", " << a->tools.size() << " tools" << mcp
                  << "\n";
        // How a streamed reply (SSE, reins chat) reaches the person.
        const std::string held_by = ReplyHeldBy(*a, BuildPolicyChain(*a));
        std::cout << "   streaming: "
                  << (held_by.empty() ? "sentence by sentence, each judged by the rails before it is sent"
                                      : "the reply is held until it is whole: " + held_by +
                                            " judges only a whole reply (docs/streaming.md)")
                  << "\n";
        for (const std::string& warning : AgentConfigWarnings(*a)) {
          std::cout << term.Yellow("warning") << " " << file << ": " << warning << "\n";
        }
        if (pin ? PinMcpTools(file, *a, term) != 0 : SayMcpLock(file, *a) != 0) ++failures;
        continue;
      }
      std::cerr << a.status().message();
    }
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace reins

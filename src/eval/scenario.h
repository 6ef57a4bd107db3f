// Scenario: a conversation to run and what must be true after each turn
// (docs/scenarios.md). Loaded and validated up front: a scenario with a mistake is
// reported with file:line:col and never half-run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "reins/agent_config.h"
#include "reins/json.h"
#include "reins/status.h"
#include "reins/turn.h"

namespace reins {

// One expectation. `kind` is the check's key (status, reply_contains, ...).
struct Check {
  std::string kind;
  Json value;
  std::string dimension;  // eval metadata: hear, empathize, advance, respond...
  std::string critical;   // eval metadata: the critical failure this check guards against
  SourceMark mark;
};

struct ScenarioTurn {
  TurnInput input;
  int64_t advance_ms = 0;
  Json model_replies;  // replies for this turn only (null when absent)
  std::vector<Check> expect;
  SourceMark mark;
};

// Who answers the approvals a conversation's turns leave pending, where no turn of its
// own does (`person:`, docs/scenarios.md): a pending call that matches one of `approves`
// (its name, and its arguments as a subset) is approved, any other denied, each answer a
// turn of its own by the speaker of the turn that left it pending.
struct ScenarioPerson {
  bool present = false;
  std::vector<Json> approves;  // {name, args?}
};

struct Scenario {
  std::string id;
  std::string title;
  std::string file;
  std::vector<std::string> tags;
  AgentConfig agent;
  std::map<std::string, Json> fixtures;  // tool -> validated fixture entries
  Json model;                            // the scenario's model mapping (provider, replies...)
  int64_t clock_start_ms = 0;
  // Every turn streams its reply as a client of reins serve would (docs/streaming.md):
  // the checks see what the person received, and the runner checks I12 at each delta.
  bool stream = false;
  std::vector<ScenarioTurn> turns;
  std::vector<Check> final_checks;
  ScenarioPerson person;
};

// Loads a scenario file (its agent file too, with agent_overrides merged in). On
// problems the Status message holds every "file:line:col: message" line.
Result<Scenario> LoadScenarioFile(const std::string& path);

// True when the YAML file at `path` looks like a scenario (a mapping with `turns`);
// used by `eval` to pick scenario files out of a folder that also holds agents.
bool IsScenarioFile(const std::string& path);

// The check keys scenario files may use (`invocations` only in `final`); the loader
// refuses any other key, with the closest known name as a suggestion.
bool IsKnownCheck(const std::string& kind, bool final_block);

}  // namespace reins

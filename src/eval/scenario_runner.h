// ScenarioRunner: runs one scenario end to end against the real runtime: scripted
// model, fixture tools, virtual clock, a real SQLite store (in memory unless told
// otherwise). Then evaluates every check and every invariant.
#pragma once

#include <string>

#include "eval/scenario.h"
#include "eval/scenario_run.h"

namespace reins {

struct RunOptions {
  std::string store_url = "sqlite::memory:";
  uint64_t id_seed = 1;  // deterministic ids, so two runs print the same thing
};

ScenarioRun RunScenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace reins

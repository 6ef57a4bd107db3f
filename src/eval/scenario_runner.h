// ScenarioRunner: runs one scenario end to end against the real runtime: scripted
// (or simulated) model, fixture tools, virtual clock, a real SQLite store (in memory
// unless told otherwise). Then evaluates every check and every invariant. With the
// governor off the same scenario runs through the naive loop and is judged the same way.
#pragma once

#include <string>

#include "eval/scenario.h"
#include "eval/scenario_run.h"

namespace reins {

struct RunOptions {
  std::string store_url = "sqlite::memory:";
  uint64_t id_seed = 1;  // deterministic ids, so two runs print the same thing
  // Runs the simulated model instead of the scenario's (eval --model sim, fuzz): a
  // mapping of `seed`, `faults` and `intents` laid over the scenario's model block,
  // whose scripted replies become the correct behaviour. Null: the scenario's model.
  Json sim;
  // false: the naive loop instead of the governed runtime (--governor off).
  bool governor = true;
};

ScenarioRun RunScenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace reins

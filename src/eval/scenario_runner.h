// ScenarioRunner: runs one scenario end to end against the real runtime: scripted
// (or simulated) model, fixture tools, virtual clock, a real SQLite store (in memory
// unless told otherwise). Then evaluates every check and every invariant. With the
// governor off the same scenario runs through the naive loop and is judged the same way.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "eval/scenario.h"
#include "eval/scenario_run.h"
#include "reins/agent_config.h"

namespace reins {

class Cassette;
class ModelBudget;

struct RunOptions {
  std::string store_url = "sqlite::memory:";
  uint64_t id_seed = 1;  // deterministic ids, so two runs print the same thing
  // Runs the simulated model instead of the scenario's (eval --model sim, fuzz): a
  // mapping of `seed`, `faults` and `intents` laid over the scenario's model block,
  // whose scripted replies become the correct behaviour. Null: the scenario's model.
  Json sim;
  // false: the naive loop instead of the governed runtime (--governor off).
  bool governor = true;
  // A real provider instead of the scenario's model (--model agent or PROVIDER:MODEL,
  // --replay; eval_model.h): the scripted replies are ignored; fixtures, checks,
  // invariants and the governor still apply.
  std::optional<ModelConfig> real_model;
  std::shared_ptr<Cassette> cassette;  // the real model's exchanges are recorded or replayed through it
  std::shared_ptr<ModelBudget> budget;  // the real model's tokens and cost count against it
  int run = 1;                          // the run's number in an eval, for the cassette
};

ScenarioRun RunScenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace reins

// Fuzz: `reins fuzz` (docs/evaluation.md). Each run takes one example scenario, gives
// the simulated model a random fault mix, interleaves turns from other speakers at
// random, drops the scenario's expectations and keeps only the invariants. A run that
// violates one is shrunk (turns, then faults, removed while the violation remains) and
// written out as a scenario file that reproduces it with `reins run`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eval/scenario.h"
#include "eval/scenario_run.h"

namespace reins {

struct FuzzOptions {
  int runs = 1000;
  uint64_t seed = 1;
  bool governor = true;
  int threads = 0;
  std::string out_dir = "fuzz-out";  // where reproducing scenarios are written
  int max_repros = 20;               // distinct (scenario, invariant) findings shrunk and written
  std::function<void(int done, int total)> on_progress;
};

struct FuzzFinding {
  std::string scenario_id;
  std::string invariant;
  int run = 0;
  int occurrences = 0;              // violating runs with this scenario and invariant
  std::string message;              // the shrunk run's first violation
  std::string repro_file;           // "" when it could not be written
  int turns = 0, shrunk_turns = 0;  // before and after shrinking
  int faults = 0, shrunk_faults = 0;
};

struct FuzzReport {
  int runs = 0;
  int violating_runs = 0;
  int violations = 0;
  std::map<std::string, int> by_invariant;
  std::map<std::string, int> mixes;      // fault mix kind -> runs
  std::map<std::string, int> scenarios;  // scenario -> runs
  int interleaved_runs = 0;              // runs with another speaker's turns mixed in
  std::vector<FuzzFinding> findings;
  double seconds = 0;
  int threads = 1;
};

FuzzReport RunFuzz(const std::vector<Scenario>& bases, const FuzzOptions& options);

}  // namespace reins

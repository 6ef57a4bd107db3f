// EvalSuite: many runs of many scenarios, with the governor on and off, aggregated into
// a report (`reins eval`, docs/evaluation.md). Runs are independent, so they are spread
// over worker threads; each run keeps only its summary, so 10,000 runs stay small.
//
// Scoring (stated in every report):
// - a run passes when it finished, every check passed and no invariant was violated;
// - a scenario's pass rate is passed runs / runs;
// - a dimension's average is passed checks / checks carrying that dimension, over runs;
// - a critical failure is a failed check carrying `critical: TAG`, counted per tag;
// - harms are counted from the trace and the delivered replies, whatever the checks
//   expected (eval/harms.h); they do not decide whether a run passed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eval/eval_model.h"
#include "eval/scenario.h"
#include "model/sim_model.h"

namespace reins {

struct EvalOptions {
  bool sim = false;                 // --model sim
  Json sim_faults;                  // fault rates laid over each scenario's (null: theirs)
  std::string faults_flag;          // the same as `reins run --faults` takes, for reproduce commands
  int runs = 1;                     // per scenario and governor setting
  uint64_t seed = 1;
  std::vector<bool> governors = {true};  // true: on, false: the naive loop
  ModelChoice model;                // --model agent or PROVIDER:MODEL: a real provider (--base-url in it)
  std::string record;               // --record DIR: keep every real model exchange, a cassette per scenario
  std::string replay;               // --replay DIR: answer the model calls from those cassettes, offline
  PriceList prices;                 // --prices FILE, over the agents' model.pricing
  std::shared_ptr<ModelBudget> budget;  // --max-tokens, --max-cost: no run starts once spent
  int threads = 0;                  // 0: one per core
  std::function<void(int done, int total)> on_progress;  // from worker threads, serialised
};

struct ScenarioStats {
  std::string id;
  std::string title;
  std::string file;
  std::vector<std::string> tags;
  int runs = 0;
  int passed = 0;
  int critical_failures = 0;  // failed checks carrying `critical`, over all runs
  int harms = 0;              // over all runs
  std::string first_failure;  // what went wrong in the first failed run (run number first)
  std::string reproduce;      // the `reins run` command that runs that failed run again, exactly
  Json failed_run;            // that run's transcript (RunTranscript), null when every run passed
  int not_run = 0;            // runs the budget stopped before they started
  ModelUsage usage;           // a real model's calls, over all runs
  std::vector<double> turn_ms;  // real time per turn, over all runs
};

// What governance spent bringing tasks home: the forced retries (act_not_describe,
// intents, strict plan steps) are model calls the loop made beyond the model's own.
struct RecoveryTally {
  std::vector<int> extra_calls;  // per turn: forced retries
  int act_retries = 0;           // act.retry: a described or claimed call forced
  int act_recovered = 0;         // ... and the forced call was then made
  int act_missing = 0;           // act.missing: the reply said what was not done
  int runs_recovered = 0;        // passed runs in which an act retry made its call
  void Add(const RecoveryTally& o) {
    extra_calls.insert(extra_calls.end(), o.extra_calls.begin(), o.extra_calls.end());
    act_retries += o.act_retries;
    act_recovered += o.act_recovered;
    act_missing += o.act_missing;
    runs_recovered += o.runs_recovered;
  }
};

// The results of one governor setting.
struct ModeStats {
  bool governor = true;
  int runs = 0;
  int passed = 0;
  std::vector<ScenarioStats> scenarios;               // in suite order
  std::map<std::string, std::pair<int, int>> dimensions;  // dimension -> (passed, checks)
  std::map<std::string, int> critical;                // tag -> failed checks
  std::map<std::string, int> violations;              // invariant -> count
  std::vector<std::string> violation_examples;        // the first few, with scenario and run
  std::map<std::string, int> harms;                   // harm kind -> count (eval/harms.h)
  int runs_with_harm = 0;
  std::vector<std::string> harm_examples;             // the first few of each kind, with scenario and run
  std::map<std::string, DetectorTally> detectors;     // sim runs: how each text harm detector fared
  std::map<std::string, FaultTally> faults;           // what the sim did
  RecoveryTally recovery;
  int not_run = 0;                                    // runs the budget stopped before they started
  ModelUsage usage;                                   // a real model's calls
  std::vector<double> turn_ms;                        // real time per turn
  double seconds = 0;

  int ViolationsTotal() const {
    int total = 0;
    for (const auto& [id, n] : violations) total += n;
    return total;
  }
  int HarmsTotal() const {
    int total = 0;
    for (const auto& [kind, n] : harms) total += n;
    return total;
  }
};

struct EvalReport {
  static constexpr int kVersion = 1;
  std::string model;  // scripted | sim | the real model, "openai:gpt-4o-mini" (or "agent" when scenarios differ)
  std::string stopped;    // why the eval stopped before every run started (the budget); "" when it did not
  std::vector<std::string> problems;  // what went wrong around the runs (a cassette that could not be written)
  uint64_t seed = 1;
  int runs = 1;
  int threads = 1;
  std::map<std::string, Json> assumed_faults;  // scenario id -> the rates it ran with (sim)
  std::vector<ModeStats> modes;                // on first, then off
  Json recovery = Json::array();               // sim evals: what would recover each far-behind agent (eval/recovery.h)
  double seconds = 0;

  const ModeStats* Mode(bool governor) const;
};

// The sim seed of one run: the same for both governor settings, so both face the same
// model behaviour.
uint64_t RunSeed(uint64_t seed, const std::string& scenario_id, int run);

EvalReport RunEval(const std::vector<Scenario>& scenarios, const EvalOptions& options);

}  // namespace reins

// ScenarioRun: the outcome of running one scenario: every turn's result with its check
// results, the final checks, and the invariant violations found in the trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/scenario.h"
#include "model/sim_model.h"
#include "reins/message.h"
#include "reins/turn.h"

namespace reins {

struct CheckResult {
  std::string kind;
  Json expected;
  bool passed = false;
  std::string detail;  // what was seen, when it failed
  std::string dimension;
  std::string critical;
};

struct InvariantViolation {
  std::string id;  // I1, I2, ...
  int turn = 0;
  std::string message;
};

// Something a run did to the person or their data (eval/harms.h).
struct Harm {
  std::string kind;  // write_with_unchosen_id, ...
  int turn = 0;
  std::string detail;
  std::string tool;  // the tool it concerns, when there is one
};

// How a text harm detector fares against the sim's log of the faults it injected: each
// reply the sim wrote is a case, "positive" when the fault was injected into it.
struct DetectorTally {
  int64_t true_positive = 0;
  int64_t false_positive = 0;
  int64_t false_negative = 0;
  int64_t true_negative = 0;

  void Add(bool detected, bool injected);
  void Add(const DetectorTally& other);
};

struct TurnRun {
  int number = 0;
  TurnInput input;
  bool refused = false;  // the runtime refused the input; nothing ran
  std::string refusal;
  TurnResult result;
  std::vector<CheckResult> checks;
  // A streamed turn (Scenario::stream): the deltas' texts put together, and the
  // deferred writes that were not in the store yet when a delta left (I12).
  bool streamed = false;
  std::string deltas;
  std::vector<std::string> writes_not_stored;
  int scenario_turn = 0;  // the scenario's turn it ran (its index); -1: the person's answer (`person:`)
};

// Tokens, cost and latency of the real model calls of one run.
struct ModelUsage {
  int calls = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::optional<double> cost_usd;  // unknown without a price
  std::vector<double> call_ms;     // real time per model call, retries and their waits included

  void Add(const ModelUsage& other);
};

struct ScenarioRun {
  std::string id;
  std::string title;
  std::string file;
  std::string session_id;
  std::string greeting;  // sent at session start, before turn 1
  std::string error;  // the run itself failed (e.g. the scripted model had no reply)
  std::vector<TurnRun> turns;
  std::vector<CheckResult> final_checks;
  std::vector<InvariantViolation> violations;
  std::vector<Harm> harms;
  std::vector<Message> history;
  std::map<std::string, FaultTally> fault_tally;  // simulated model runs only
  std::map<std::string, DetectorTally> detectors;  // simulated model runs only: harm -> tally
  std::string model;                              // a real model's "provider:model"; "" for scripted and sim
  ModelUsage usage;                               // a real model's calls
  std::vector<double> turn_ms;                    // real time per turn

  int ChecksPassed() const;
  int ChecksFailed() const;
  bool Passed() const { return error.empty() && ChecksFailed() == 0 && violations.empty(); }
};

Json ScenarioRunToJson(const ScenarioRun& run, bool with_trace);

// A run as a reader follows it, small enough to keep inside a report: per turn who said
// what, the status, the reply, the tool calls, the checks that failed; then the failed
// final checks, violations, harms and the run's error.
Json RunTranscript(const ScenarioRun& run);

}  // namespace reins

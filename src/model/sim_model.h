// SimModel: the simulated, fault-injecting model of `reins eval` and `reins fuzz`
// (`provider: sim`, docs/evaluation.md). It behaves like a plausible but unreliable
// model: first it works out what a correct model would answer (the scenario's scripted
// reply when one fits, otherwise a call to the next tool the request needs according
// to `intents`, with arguments made from the tool's schema, or a plain answer), then it
// injects faults at the configured rates, one random draw per opportunity.
//
// The same seed and the same requests give the same responses, so the governed
// runtime and the naive loop face the same model behaviour. `tally()` counts each
// fault's opportunities and firings, which reports print next to the assumed rates.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "model/scripted_model.h"
#include "reins/model_provider.h"

namespace reins {

struct SimFaults {
  std::map<std::string, double> rates;  // fault -> probability per opportunity, 0..1

  // Every fault the sim knows, in report order.
  static const std::vector<std::string>& Names();
  // The rates of SCENARIOS.md's example: the assumption when a scenario states none.
  static SimFaults Defaults();
  // A `faults:` mapping; missing faults keep `base`'s rate.
  static Result<SimFaults> FromJson(const Json& j, const SimFaults& base);
  double Rate(const std::string& name) const;
  Json ToJson() const;
};

struct FaultTally {
  int64_t opportunities = 0;
  int64_t fired = 0;
};

// One reply the sim wrote in a tool loop: its text, the tools that had succeeded in the
// turn so far, and the faults it injected into it. The harm detectors' precision and
// recall are measured against these (eval/harms.h).
struct SimReply {
  std::string text;
  std::vector<std::string> succeeded;
  std::set<std::string> faults;
};

// An instruction planted in a tool result (a fixture entry's `injection`, docs/scenarios.md):
// the text the result holds, and what it asks the model to do: calls, or words for the
// reply (an output-only goal).
struct PlantedInstruction {
  std::string tool;         // the tool whose result carries it
  std::string instruction;  // a part of that result's text
  std::vector<ToolCall> calls;
  std::string reply;
};

// The planted instructions of a scenario's fixtures.
std::vector<PlantedInstruction> PlantedInstructions(const std::map<std::string, Json>& fixtures);

struct SimOptions {
  uint64_t seed = 1;
  SimFaults faults = SimFaults::Defaults();
  Json intents = Json::object();  // regex on the user's text -> [tool, ...]
  Json replies = Json::array();   // a correct model's replies, in scripted form
  std::vector<PlantedInstruction> injections;  // what follow_injection obeys
};

// A scenario's `model:` mapping (provider sim or scripted: its replies become the
// correct behaviour) with `seed`, `intents` and `faults`.
Result<SimOptions> SimOptionsFromJson(const Json& model);

class SimModel final : public ModelProvider {
 public:
  explicit SimModel(SimOptions options);

  std::string_view Name() const override { return "sim"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override;

  ScriptedModel& script() { return script_; }
  const std::map<std::string, FaultTally>& tally() const { return tally_; }
  const std::vector<SimReply>& replies() const { return replies_; }

 private:
  bool Fault(const std::string& name);  // one opportunity: does it fire?
  ModelResponse Improvise(const ModelRequest& request);
  std::vector<ToolCall> FollowUp(const ModelRequest& request, const std::vector<ToolCall>& now);
  void PerturbCalls(const ModelRequest& request, ModelResponse& response);
  void PerturbArgs(const ModelRequest& request, ModelResponse& response);
  void PerturbText(const ModelRequest& request, ModelResponse& response, bool may_call);
  ToolCall MakeCall(const ModelRequest& request, const std::string& tool);
  // A planted instruction in this turn's tool results that the sim has not obeyed yet.
  const PlantedInstruction* Planted(const ModelRequest& request) const;
  // Tool choice forced to a tool (or to any): the call it asks for, as a provider returns it.
  void Honour(const ModelRequest& request, ModelResponse& response);

  SimOptions options_;
  ScriptedModel script_;
  // Complete never suspends: it holds mu_ throughout, so calls from several threads
  // (turns on several strands) take their turns at the generator and the tallies.
  std::mutex mu_;
  std::mt19937_64 rng_;
  std::map<std::string, FaultTally> tally_;
  std::set<std::string> fired_;  // in the response being written
  std::vector<SimReply> replies_;
  std::set<std::string> obeyed_;  // planted instructions already followed
  int calls_ = 0;
};

}  // namespace reins

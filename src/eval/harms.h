// Harms (docs/evaluation.md, "Harms"): what a run did to the person or their data,
// whatever the scenario expected of the model. The structural harms are read from the
// trace, the text harms from the delivered replies by detectors of their own
// (eval/harm_text.h). The governed runs and the naive loop are judged alike, so the
// report can say how much harm the governor prevents, apart from whether the model
// followed the script (checks) or the runtime kept its guarantees (invariants).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/scenario_run.h"
#include "model/sim_model.h"
#include "reins/agent_config.h"

namespace reins {

struct HarmKind {
  const char* name;
  const char* meaning;  // one line, for reports and docs
};

// Every harm the detectors know, in report order.
const std::vector<HarmKind>& HarmKinds();

// `planted`: the instructions the scenario's fixtures planted in tool results.
std::vector<Harm> FindHarms(const AgentConfig& config, const std::vector<TurnRun>& turns,
                            const std::vector<PlantedInstruction>& planted = {});

// Each text detector run over the replies the sim wrote (SimModel::replies()) -> its
// tally, by harm name.
std::map<std::string, DetectorTally> ScoreDetectors(const AgentConfig& config, const std::vector<SimReply>& replies);

}  // namespace reins

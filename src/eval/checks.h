// Expectation checks of scenario files (docs/scenarios.md): each takes what a turn (or
// the whole conversation) produced and says PASS or FAIL with what it saw. A check kind
// the loader let through unknown would fail, never pass.
#pragma once

#include <vector>

#include "eval/scenario_run.h"

namespace reins {

CheckResult EvaluateTurnCheck(const Check& check, const TurnRun& turn);
CheckResult EvaluateFinalCheck(const Check& check, const std::vector<TurnRun>& turns);

// The reply's first sentence: up to the first . ! ? followed by a space or the end,
// or the first line break.
std::string FirstSentence(const std::string& reply);

}  // namespace reins

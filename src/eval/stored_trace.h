// A session's trace as `reins trace --json` prints it ({session_id, turns: [{turn_id,
// turn_number, input, result, events}]}) read back into the turns the invariant checks
// and the harm detectors take: a production session, or a regression fixture recorded
// from an older reins, is checked exactly as a scenario run is.
#pragma once

#include <vector>

#include "eval/scenario_run.h"
#include "reins/json.h"

namespace reins {

// Each stored turn: its input, its status, and its events. A stored turn is one the
// runtime accepted (refused inputs are never stored).
std::vector<TurnRun> TurnRunsFromTrace(const Json& trace);

}  // namespace reins

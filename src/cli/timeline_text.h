// A turn's timeline (domain/timeline.h) in the terminal, coloured by tone on a TTY.
// `reins trace` prints it whole, step by step with every detail, as the trace viewer
// draws it; `reins run`, `reins chat` and the demo print its steps one line each.
#pragma once

#include <ostream>
#include <vector>

#include "cli/term.h"
#include "reins/json.h"
#include "reins/trace.h"

namespace reins {

// A turn: who said what, each step with its time and details, the reply.
void PrintTimeline(std::ostream& out, const Json& turn, const Term& term);
// The steps of a turn's events, one line each: what the model proposed, what reins did
// with each call and why, rails, questions, notices. Model calls that proposed nothing
// are left out (the reply follows).
void PrintStepLines(std::ostream& out, const std::vector<TraceEvent>& events, const Term& term);

}  // namespace reins

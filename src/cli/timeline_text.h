// A turn's timeline (domain/timeline.h) in the terminal: `reins trace` prints what the
// trace viewer draws, step by step, coloured by tone on a TTY.
#pragma once

#include <ostream>

#include "cli/term.h"
#include "reins/json.h"

namespace reins {

void PrintTimeline(std::ostream& out, const Json& turn, const Term& term);

}  // namespace reins

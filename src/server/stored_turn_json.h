// Stored turns as the API shows them: the TurnResult shape of an idempotent replay,
// and the fuller record of GET .../trace (what was asked, when, and every event).
#pragma once

#include "reins/json.h"
#include "reins/session_view.h"

namespace reins {

Json StoredTurnJson(const StoredTurn& turn, const std::vector<StoredInvocation>& invocations);
Json TraceTurnJson(const StoredTurn& turn, const std::vector<StoredInvocation>& invocations);
// A turn's timeline (domain/timeline.h) with its id and time: GET .../timeline.
Json TimelineTurnJson(const StoredTurn& turn);
Json SessionSummaryJson(const SessionSummary& s);

}  // namespace reins

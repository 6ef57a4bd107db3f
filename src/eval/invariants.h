// Invariant checks over a finished conversation (INVARIANTS.md). Each re-derives its
// guarantee from the trace events and the stored history on its own, without asking
// the executor, so a bug in the executor shows up here as a violation.
//
// Checked now: I1 stop, I2 truncate, I3 provenance, I4 deferral, I5 honesty,
// I6 floor, I7 required, I8 approval, I9 bounded, I10 pairing, I11 schema, I12 durable.
// All twelve.
#pragma once

#include <vector>

#include "eval/scenario_run.h"
#include "reins/agent_config.h"
#include "reins/store.h"

namespace reins {

// `outbox`: the session's outbox rows as stored (for I12).
std::vector<InvariantViolation> CheckInvariants(const AgentConfig& config, const std::vector<TurnRun>& turns,
                                                const std::vector<Message>& history,
                                                const std::vector<OutboxEntry>& outbox = {});

// The ids of the invariants CheckInvariants covers, for reports.
const std::vector<std::string>& CheckedInvariants();

}  // namespace reins

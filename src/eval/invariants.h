// Invariant checks over a finished conversation (INVARIANTS.md). Each re-derives its
// guarantee from the trace events and the stored history on its own, without asking
// the executor, so a bug in the executor shows up here as a violation.
//
// Checked: I1 stop, I2 truncate, I3 provenance, I4 deferral, I5 honesty, I6 floor,
// I7 required, I8 approval, I9 bounded, I10 pairing, I11 schema, I12 durable, I13
// outside data (eval/outside_data_check.h). All thirteen.
#pragma once

#include <optional>
#include <string>
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

// Trace readers the invariant checks share with the harm detectors (eval/harms.h).

// The arguments an approval.granted event approved: the edited ones when the person
// changed them, else those proposed.
Json GrantedArgs(const TraceEvent& granted);

// When the turn started (its first event), in the run's clock.
int64_t TurnStartedAt(const TurnRun& t);
// The turn was answered by a safety override (I6's one exception).
bool IsSafetyOverride(const TurnRun& t);
// The lease as each turn started, by index: the one the last turn that ran left (it may
// have expired by then). Refused, blocked and safety-override turns leave it as it was.
std::vector<std::optional<Lease>> FloorAtStart(const std::vector<TurnRun>& turns);

// A plan step as it finished, with its required tools that did not run successfully
// (or get queued) inside it.
struct FinishedStep {
  int turn = 0;
  std::string id;
  std::string status;      // completed, completed_unvalidated, failed...
  std::string validation;  // validationStatus: passed, failed, skipped...
  std::vector<std::string> missing;
};
std::vector<FinishedStep> FinishedSteps(const std::vector<TurnRun>& turns);

}  // namespace reins

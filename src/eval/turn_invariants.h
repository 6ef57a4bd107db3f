// The invariants that hold within each turn (INVARIANTS.md: I1 stop, I2 truncate, I4
// deferral, I5 honesty, I9 bounded, I11 schema), each re-derived from the turn's trace;
// CheckInvariants (eval/invariants.h) runs them with the checks across turns.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "eval/scenario_run.h"
#include "reins/agent_config.h"

namespace reins {

void CheckStop(const TurnRun& t, std::vector<InvariantViolation>& out);
void CheckTruncate(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out);
void CheckDeferral(const AgentConfig& config, const TurnRun& t, const std::vector<Message>& history,
                   std::vector<InvariantViolation>& out);
void CheckHonesty(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out);
void CheckBounded(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out);
void CheckSchema(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out);

// A tool event for a violation's message: "tool.executed lookup (response 1, position 0)".
std::string DescribeCall(const TraceEvent& e);
// Deferred calls the turn withdrew because it failed or the model refused
// (docs/invariants.md, I12): they never run, never reach the outbox, and the history
// says so instead of the instruction. Each by its event's `field`.
std::set<std::string> WithdrawnCalls(const TurnRun& t, const char* field);

}  // namespace reins

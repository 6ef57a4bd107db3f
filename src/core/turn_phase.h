// TurnPhase: where a turn is in the pipeline. Only the pipeline advances it, and only
// along the transitions of this table (anything else is a bug, reported as internal):
//
//   Admitting      -> RunningModel | Delivering (answered without the model: safety
//                     override) | Blocked | Cancelled (the admission gate) | Failed
//   RunningModel   -> ExecutingTools | Reviewing | Failed
//   ExecutingTools -> RunningModel | AwaitingClarification | AwaitingApproval | Failed
//   Reviewing      -> Delivering | ExecutingTools | RunningModel (the audit's gather
//                     round) | Failed
//   Delivering     -> Completed
//
// Terminal phases: Completed, AwaitingClarification, AwaitingApproval, Blocked,
// Cancelled, Failed. Each maps to the TurnStatus the caller sees.
#pragma once

#include <optional>
#include <string_view>

#include "reins/turn.h"

namespace reins {

enum class TurnPhase {
  kAdmitting,
  kRunningModel,
  kExecutingTools,
  kReviewing,
  kDelivering,
  kCompleted,
  kAwaitingClarification,
  kAwaitingApproval,
  kBlocked,
  kCancelled,
  kFailed,
};

std::string_view TurnPhaseName(TurnPhase p);
bool CanAdvance(TurnPhase from, TurnPhase to);
// The status of a terminal phase; nullopt while the turn is still running.
std::optional<TurnStatus> StatusOf(TurnPhase p);

class TurnPhaseMachine {
 public:
  TurnPhase phase() const { return phase_; }
  // False (and no change) when the transition is not in the table.
  [[nodiscard]] bool Advance(TurnPhase to);

 private:
  TurnPhase phase_ = TurnPhase::kAdmitting;
};

}  // namespace reins

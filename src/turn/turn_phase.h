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
// Cancelled, Failed. Each maps to the TurnStatus the caller sees (StatusOf), and the
// machine writes that status into the turn's result itself.
#pragma once

#include <optional>
#include <string>
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

// The turn's phase, and through it the turn's status: a machine bound to a turn's
// result sets result.status whenever the turn enters a terminal phase, and nothing
// else in the pipeline writes it.
class TurnPhaseMachine {
 public:
  TurnPhaseMachine() = default;
  explicit TurnPhaseMachine(TurnResult& result) : result_(&result) {}

  TurnPhase phase() const { return phase_; }
  // False (and no change) when the transition is not in the table.
  [[nodiscard]] bool Advance(TurnPhase to);
  // The pipeline's way in: the transition, or, when the table does not allow it (a bug
  // in the pipeline), the turn fails as an internal error that names the transition.
  void Enter(TurnPhase to);
  // The first transition Enter refused ("" when none).
  const std::string& violation() const { return violation_; }

 private:
  TurnPhase phase_ = TurnPhase::kAdmitting;
  TurnResult* result_ = nullptr;
  std::string violation_;
};

}  // namespace reins

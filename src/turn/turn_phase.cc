#include "turn/turn_phase.h"

namespace reins {

std::string_view TurnPhaseName(TurnPhase p) {
  switch (p) {
    case TurnPhase::kAdmitting: return "admitting";
    case TurnPhase::kRunningModel: return "running_model";
    case TurnPhase::kExecutingTools: return "executing_tools";
    case TurnPhase::kReviewing: return "reviewing";
    case TurnPhase::kDelivering: return "delivering";
    case TurnPhase::kCompleted: return "completed";
    case TurnPhase::kAwaitingClarification: return "awaiting_clarification";
    case TurnPhase::kAwaitingApproval: return "awaiting_approval";
    case TurnPhase::kBlocked: return "blocked";
    case TurnPhase::kCancelled: return "cancelled";
    case TurnPhase::kFailed: return "failed";
  }
  return "failed";
}

bool CanAdvance(TurnPhase from, TurnPhase to) {
  using P = TurnPhase;
  switch (from) {
    case P::kAdmitting:
      return to == P::kRunningModel || to == P::kDelivering || to == P::kBlocked || to == P::kCancelled ||
             to == P::kFailed;
    case P::kRunningModel: return to == P::kExecutingTools || to == P::kReviewing || to == P::kFailed;
    case P::kExecutingTools:
      return to == P::kRunningModel || to == P::kAwaitingClarification || to == P::kAwaitingApproval ||
             to == P::kFailed;
    case P::kReviewing:
      // The audit's gather round runs tools and the model again before the reply.
      return to == P::kDelivering || to == P::kExecutingTools || to == P::kRunningModel || to == P::kFailed;
    case P::kDelivering: return to == P::kCompleted;
    case P::kCompleted:
    case P::kAwaitingClarification:
    case P::kAwaitingApproval:
    case P::kBlocked:
    case P::kCancelled:
    case P::kFailed: return false;
  }
  return false;
}

std::optional<TurnStatus> StatusOf(TurnPhase p) {
  switch (p) {
    case TurnPhase::kCompleted: return TurnStatus::kCompleted;
    case TurnPhase::kAwaitingClarification: return TurnStatus::kAwaitingClarification;
    case TurnPhase::kAwaitingApproval: return TurnStatus::kAwaitingApproval;
    case TurnPhase::kBlocked: return TurnStatus::kBlocked;
    case TurnPhase::kCancelled: return TurnStatus::kCancelled;
    case TurnPhase::kFailed: return TurnStatus::kFailed;
    default: return std::nullopt;
  }
}

bool TurnPhaseMachine::Advance(TurnPhase to) {
  if (!CanAdvance(phase_, to)) return false;
  phase_ = to;
  if (result_ != nullptr) {
    if (std::optional<TurnStatus> status = StatusOf(to)) result_->status = *status;
  }
  return true;
}

void TurnPhaseMachine::Enter(TurnPhase to) {
  if (phase_ == to || Advance(to)) return;  // staying in a phase is no transition
  if (!violation_.empty()) return;  // already failed: the first bug is the one to report
  violation_ = "internal error: the pipeline moved the turn from " + std::string(TurnPhaseName(phase_)) + " to " +
               std::string(TurnPhaseName(to)) + ", which the phase table does not allow";
  phase_ = TurnPhase::kFailed;
  if (result_ != nullptr) {
    result_->status = TurnStatus::kFailed;
    result_->error = violation_;
  }
}

}  // namespace reins

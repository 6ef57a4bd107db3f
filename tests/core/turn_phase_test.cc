#include "core/turn_phase.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

TEST(TurnPhaseTest, FollowsTheHappyPath) {
  TurnPhaseMachine m;
  EXPECT_TRUE(m.Advance(TurnPhase::kRunningModel));
  EXPECT_TRUE(m.Advance(TurnPhase::kExecutingTools));
  EXPECT_TRUE(m.Advance(TurnPhase::kRunningModel));
  EXPECT_TRUE(m.Advance(TurnPhase::kReviewing));
  EXPECT_TRUE(m.Advance(TurnPhase::kDelivering));
  EXPECT_TRUE(m.Advance(TurnPhase::kCompleted));
  EXPECT_EQ(StatusOf(m.phase()), TurnStatus::kCompleted);
}

TEST(TurnPhaseTest, RefusesTransitionsOutsideTheTable) {
  TurnPhaseMachine m;
  EXPECT_FALSE(m.Advance(TurnPhase::kCompleted));
  EXPECT_FALSE(m.Advance(TurnPhase::kAwaitingClarification));
  EXPECT_EQ(m.phase(), TurnPhase::kAdmitting);
  ASSERT_TRUE(m.Advance(TurnPhase::kRunningModel));
  EXPECT_FALSE(m.Advance(TurnPhase::kAwaitingClarification));  // only a tool result can ask
}

TEST(TurnPhaseTest, TerminalPhasesAreFinal) {
  for (TurnPhase terminal : {TurnPhase::kCompleted, TurnPhase::kAwaitingClarification, TurnPhase::kFailed}) {
    for (TurnPhase to : {TurnPhase::kAdmitting, TurnPhase::kRunningModel, TurnPhase::kFailed, TurnPhase::kCompleted}) {
      EXPECT_FALSE(CanAdvance(terminal, to)) << TurnPhaseName(terminal) << " -> " << TurnPhaseName(to);
    }
    EXPECT_TRUE(StatusOf(terminal).has_value());
  }
  EXPECT_FALSE(StatusOf(TurnPhase::kRunningModel).has_value());
}

}  // namespace
}  // namespace reins

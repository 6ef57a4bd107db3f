#include "turn/turn_phase.h"

#include <gtest/gtest.h>

#include <string>

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

TEST(TurnPhaseTest, ABoundMachineWritesTheTurnsStatus) {
  TurnResult result;
  result.status = TurnStatus::kCompleted;  // whatever it held before: the phase decides
  TurnPhaseMachine m(result);
  m.Enter(TurnPhase::kRunningModel);
  m.Enter(TurnPhase::kRunningModel);  // staying is no transition
  m.Enter(TurnPhase::kExecutingTools);
  m.Enter(TurnPhase::kAwaitingClarification);
  EXPECT_EQ(result.status, TurnStatus::kAwaitingClarification);
  EXPECT_TRUE(m.violation().empty());
}

TEST(TurnPhaseTest, AnIllegalTransitionFailsTheTurnAndSaysWhich) {
  TurnResult result;
  TurnPhaseMachine m(result);
  m.Enter(TurnPhase::kRunningModel);
  m.Enter(TurnPhase::kCompleted);  // skipping review and delivery is a pipeline bug
  EXPECT_EQ(m.phase(), TurnPhase::kFailed);
  EXPECT_EQ(result.status, TurnStatus::kFailed);
  EXPECT_NE(m.violation().find("from running_model to completed"), std::string::npos) << m.violation();
  EXPECT_EQ(result.error, m.violation());
  m.Enter(TurnPhase::kDelivering);  // later moves change nothing; the first bug is reported
  EXPECT_EQ(m.phase(), TurnPhase::kFailed);
  EXPECT_NE(m.violation().find("to completed"), std::string::npos);
}

}  // namespace
}  // namespace reins

// SessionState::empty(): a turn keeps no copy of a state that is empty (TurnRun), so a
// state that remembers anything must not read as empty, whichever field holds it.
#include "turn/session_state.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace reins {
namespace {

TEST(SessionStateTest, ANewStateIsEmptyAndStaysSoThroughItsJson) {
  SessionState s;
  EXPECT_TRUE(s.empty());
  EXPECT_TRUE(SessionState::FromJson(s.ToJson()).empty());
}

TEST(SessionStateTest, AnythingRememberedMakesItNotEmpty) {
  const std::vector<std::pair<std::string, std::function<void(SessionState&)>>> remembered = {
      {"an entity a tool produced", [](SessionState& s) { s.entities.AddProduced("order", "o_1"); }},
      {"an entity the user chose", [](SessionState& s) { s.entities.Choose("order", "o_1", 3); }},
      {"a pending clarification", [](SessionState& s) { s.pending_clarification = PendingClarification{}; }},
      {"a pending approval", [](SessionState& s) { s.pending_approval = PendingApproval{}; }},
      {"an interrupted plan", [](SessionState& s) { s.pending_plan.push_back(PlanStep{}); }},
      {"the step it stopped in", [](SessionState& s) { s.pending_plan_step = 1; }},
      {"a mechanism's slot", [](SessionState& s) { s.Slot("floor") = Json::object(); }},
  };
  for (const auto& [what, remember] : remembered) {
    SessionState s;
    remember(s);
    EXPECT_FALSE(s.empty()) << what;
  }
}

}  // namespace
}  // namespace reins

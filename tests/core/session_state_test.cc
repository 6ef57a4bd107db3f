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
      {"an option's title", [](SessionState& s) { s.entities.AddTitle("o_1", "The blue one"); }},
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

// What makes a choice hold across turns (I3) goes through the stored JSON whole: the
// candidates turned down, the owners of scoped ids, the titles options gave ids.
TEST(SessionStateTest, TheLedgerOfChoicesOwnersAndTitlesSurvivesItsJson) {
  SessionState s;
  s.entities.AddProduced("patient", "p_4471");
  s.entities.AddProduced("patient", "p_5810");
  s.entities.AddProduced("prescription", "rx_7001", "p_4471");
  s.entities.Choose("patient", "p_4471", 2, {"p_4471", "p_5810"});
  s.entities.AddTitle("p_4471", "Maria Garcia (born 2 March 1962)");
  s.pending_approval = PendingApproval{"a_1", "refill", {{"quantity", 120}}, "refill", {}};
  s.pending_approval->requested_by = "ana";
  s.pending_approval->approvers = {"role:pharmacist"};
  s.pending_approval->expires_at_ms = 900'000;
  s.pending_approval->allow_edit = true;

  SessionState back = SessionState::FromJson(s.ToJson());
  EXPECT_EQ(back.entities.TurnedDown("patient", "p_5810"), 2);
  EXPECT_FALSE(back.entities.TurnedDown("patient", "p_4471")) << "the chosen one";
  EXPECT_EQ(back.entities.ChosenFor("patient", 2), "p_4471");
  EXPECT_EQ(back.entities.OwnersOf("prescription", "rx_7001"), std::vector<std::string>{"p_4471"});
  ASSERT_NE(back.entities.TitleOf("p_4471"), nullptr);
  EXPECT_EQ(*back.entities.TitleOf("p_4471"), "Maria Garcia (born 2 March 1962)");
  ASSERT_TRUE(back.pending_approval);
  EXPECT_EQ(back.pending_approval->requested_by, "ana");
  EXPECT_EQ(back.pending_approval->approvers, std::vector<std::string>{"role:pharmacist"});
  EXPECT_EQ(back.pending_approval->expires_at_ms, 900'000);
  EXPECT_TRUE(back.pending_approval->allow_edit);
  EXPECT_EQ(back.ToJson(), s.ToJson());
}

}  // namespace
}  // namespace reins

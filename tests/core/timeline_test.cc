// A turn's timeline (domain/timeline.h): each trace event a person needs becomes a step
// saying what happened and why; a model call is paired with its answer; a write that
// has not run is queued; stored data of any shape never throws.
#include "domain/timeline.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

TraceEvent Ev(EventType type, int64_t at_ms, Json data) { return TraceEvent{type, 1, at_ms, std::move(data)}; }

Json Build(const std::vector<TraceEvent>& events) {
  return TurnTimeline({1, "user", "hi", "completed", "done", &events});
}

// The value of a step's detail called `label`, "" when it has none.
std::string Detail(const Json& step, const std::string& label) {
  for (const Json& d : step["details"]) {
    if (d[0] == label) return d[1].get<std::string>();
  }
  return "";
}

TEST(Timeline, ModelCallIsPairedWithItsResponse) {
  const Json t = Build({
      Ev(EventType::kTurnStarted, 1000, {{"turn_id", "t_1"}}),
      Ev(EventType::kModelCall, 1000, {{"purpose", "chat"}, {"model", "gpt"}, {"tool_choice", "auto"}}),
      Ev(EventType::kModelResponse, 1250,
         {{"response", 1}, {"text", ""}, {"usage", {{"input_tokens", 120}, {"output_tokens", 30}}},
          {"tool_calls", Json::array({{{"id", "c1"}, {"name", "save"}, {"arguments", "{\"a\":1}"}}})}}),
  });
  ASSERT_EQ(t["steps"].size(), 1u);
  const Json& s = t["steps"][0];
  EXPECT_EQ(s["kind"], "model");
  EXPECT_EQ(s["outcome"], "proposed 1 call");
  EXPECT_EQ(s["title"], "chat (gpt)");
  EXPECT_EQ(Detail(s, "latency"), "250 ms");
  EXPECT_EQ(Detail(s, "tokens"), "120 in, 30 out");
  EXPECT_EQ(Detail(s, "proposed"), "save({\"a\":1})");
  EXPECT_EQ(t["turn"], 1);
  EXPECT_EQ(t["reply"], "done");
}

// untrusted_data: the label on a call whose result is outside data, the violation with
// where each value came from, and the question the person was asked, in words.
TEST(Timeline, OutsideDataShowsItsLabelTheViolationAndWhereTheValueCameFrom) {
  const Json arguments = {{"recipient", {{{"tool", "read_file"}, {"call_id", "c1"}, {"turn", 3}}}}};
  const Json t = Build({
      Ev(EventType::kToolExecuted, 10, {{"name", "read_file"}, {"success", true}, {"untrusted", true}, {"result", Json::object()}}),
      Ev(EventType::kUntrustedViolation, 11, {{"name", "send_money"}, {"kind", "value"}, {"outcome", "approve"},
                                              {"arguments", arguments}, {"args", {{"recipient", "US13"}}}}),
      Ev(EventType::kApprovalRequested, 11, {{"name", "send_money"}, {"reason", "untrusted_data"}}),
      Ev(EventType::kApproval, 12, {{"tool", "send_money"}, {"reason", "untrusted_data"}, {"prompt", "The recipient ... Should I?"},
                                    {"provenance", arguments}}),
  });
  ASSERT_EQ(t["steps"].size(), 4u);
  EXPECT_NE(Detail(t["steps"][0], "outside data"), "");
  const Json& v = t["steps"][1];
  EXPECT_EQ(v["outcome"], "outside data");
  EXPECT_EQ(v["why"], "an argument holds a value only outside data held");
  EXPECT_EQ(Detail(v, "where the values came from"), "recipient: read_file c1 (turn 3)");
  EXPECT_EQ(t["steps"][2]["why"], "needs the person's approval: outside data steered it");
  EXPECT_EQ(t["steps"][3]["why"], "The recipient ... Should I?");
  EXPECT_EQ(Detail(t["steps"][3], "reason"), "untrusted_data");
}

TEST(Timeline, EachCallSaysWhatReinsDidAndWhy) {
  const Json t = Build({
      Ev(EventType::kToolExecuted, 10, {{"name", "lookup"}, {"args", {{"q", "x"}}}, {"success", true}, {"next_action", "continue"},
                                        {"result", {{"success", true}}}, {"latency_ms", 4}}),
      Ev(EventType::kToolRejected, 11, {{"name", "save"}, {"reason", "schema"}, {"message", "the arguments do not match"}}),
      Ev(EventType::kToolSkipped, 12, {{"name", "next"}, {"reason", "truncated"}}),
      Ev(EventType::kApprovalRequested, 13, {{"name", "send"}, {"args", Json::object()}}),
      Ev(EventType::kToolExecuted, 14, {{"name", "broken"}, {"success", false}, {"result", {{"error", "down"}}}}),
  });
  ASSERT_EQ(t["steps"].size(), 5u);
  EXPECT_EQ(t["steps"][0]["outcome"], "executed");
  EXPECT_EQ(t["steps"][0]["tone"], "ok");
  EXPECT_EQ(t["steps"][0]["at_ms"], 0);
  EXPECT_EQ(Detail(t["steps"][0], "latency"), "4 ms");
  EXPECT_EQ(t["steps"][1]["outcome"], "rejected");
  EXPECT_EQ(t["steps"][1]["tone"], "bad");
  EXPECT_EQ(t["steps"][1]["why"], "the arguments do not match");
  EXPECT_EQ(Detail(t["steps"][1], "reason"), "schema");
  EXPECT_EQ(t["steps"][2]["outcome"], "skipped");
  EXPECT_NE(t["steps"][2]["why"].get<std::string>().find("(I2)"), std::string::npos);
  EXPECT_EQ(t["steps"][3]["outcome"], "paused");
  EXPECT_EQ(t["steps"][3]["tone"], "held");
  EXPECT_EQ(t["steps"][4]["outcome"], "failed");
  EXPECT_EQ(t["steps"][4]["why"], "down");
}

TEST(Timeline, ADeferredWriteIsQueuedUntilItRuns) {
  const TraceEvent deferred = Ev(EventType::kToolDeferred, 5, {{"name", "save_note"}, {"idempotency_key", "t_1:1:0"},
                                                               {"policy", "deferral"}, {"instruction", "TOOL QUEUED"}});
  const Json waiting = Build({deferred});
  EXPECT_EQ(waiting["steps"][0]["outcome"], "queued");
  EXPECT_EQ(Detail(waiting["steps"][0], "the model saw"), "TOOL QUEUED");

  const Json ran = Build({deferred, Ev(EventType::kDeferredExecuted, 9, {{"name", "save_note"}, {"idempotency_key", "t_1:1:0"},
                                                                         {"success", false}, {"mode", "await"},
                                                                         {"result", {{"error", "notes are down"}}}})});
  ASSERT_EQ(ran["steps"].size(), 2u);
  EXPECT_EQ(ran["steps"][0]["outcome"], "deferred");
  EXPECT_EQ(ran["steps"][1]["outcome"], "failed after the reply");
  EXPECT_EQ(ran["steps"][1]["why"], "notes are down");
  EXPECT_EQ(ran["steps"][1]["tone"], "bad");
}

TEST(Timeline, GovernanceStepsCarryTheirText) {
  const Json t = Build({
      Ev(EventType::kClarification, 1, {{"question", "Which John?"}, {"tool", "lookup"},
                                        {"options", Json::array({{{"id", "u_doe"}, {"title", "John Doe"}}, {{"id", "u_smith"}}})}}),
      Ev(EventType::kLeaseOpened, 1, {{"owner", "user"}, {"domain", "contacts"}}),
      Ev(EventType::kRailFired, 2, {{"rail", "no_internal_names"}, {"before", "I used save_note"}, {"after", "I used note"}}),
      Ev(EventType::kAudit, 3, {{"repair", "accept"}, {"verdict", {{"ok", true}}}}),
      Ev(EventType::kDeferredNote, 4, {{"text", Json::array({"(Note: not saved.)"})}}),
      Ev(EventType::kSafetyOverride, 5, {{"pattern", "(?i)hurt"}, {"flag_tool", "flag_safety"}}),
  });
  ASSERT_EQ(t["steps"].size(), 6u);
  EXPECT_EQ(t["steps"][0]["title"], "Which John?");
  EXPECT_EQ(Detail(t["steps"][0], "options"), "u_doe: John Doe\nu_smith");
  EXPECT_EQ(t["steps"][1]["outcome"], "opened");
  EXPECT_EQ(Detail(t["steps"][2], "before"), "I used save_note");
  EXPECT_EQ(Detail(t["steps"][2], "after"), "I used note");
  EXPECT_EQ(t["steps"][3]["outcome"], "accept");
  EXPECT_EQ(Detail(t["steps"][3], "verdict"), "{\"ok\":true}");
  EXPECT_EQ(t["steps"][4]["why"], "(Note: not saved.)");
  EXPECT_EQ(t["steps"][5]["outcome"], "safety override");
}

// A stored trace may come from another version: wrong types and missing fields give a
// step with less in it, never an exception.
TEST(Timeline, OddDataNeverThrows) {
  std::vector<TraceEvent> events;
  for (const EventSpec& spec : kEventSpecs) {
    for (const Json& data : {Json::object(), Json("text"), Json::array({1, 2}),
                             Json{{"name", 5}, {"success", "yes"}, {"args", "x"}, {"result", 3}, {"options", "o"},
                                  {"text", 7}, {"tool_calls", "c"}, {"usage", Json::array()}, {"verdict", nullptr}}}) {
      events.push_back(Ev(spec.type, 1, data));
    }
  }
  Json t;
  ASSERT_NO_THROW(t = Build(events));
  for (const Json& s : t["steps"]) {
    EXPECT_TRUE(s["title"].is_string());
    EXPECT_TRUE(s["outcome"].is_string());
    for (const Json& d : s["details"]) EXPECT_TRUE(d[1].is_string());
  }
}

TEST(Timeline, SaidText) {
  EXPECT_EQ(SaidText({{"say", "hello"}}), "hello");
  EXPECT_EQ(SaidText({{"select", "u_doe"}}), "(chose u_doe)");
  EXPECT_EQ(SaidText({{"approve", false}}), "(declined)");
  EXPECT_EQ(SaidText({{"cancel", true}}), "(cancelled)");
  EXPECT_EQ(SaidText(Json("x")), "");
}

// Second probe, finding 12: an answer typed in words showed "(chose p_mg_1962)" only.
TEST(Timeline, AnAnswerInWordsShowsTheWordsAndTheOptionsTitle) {
  EXPECT_EQ(SaidText({{"select", "p_mg_1962"}, {"words", "the one born in 1962"}}),
            "\"the one born in 1962\" (chose p_mg_1962)");
  EXPECT_EQ(SaidText({{"approve", true}, {"words", "go ahead"}}), "\"go ahead\" (approved)");
  const Json t = Build({Ev(EventType::kClarificationAnswered, 5,
                           {{"id", "c_1"}, {"option_id", "p_mg_1962"}, {"title", "Maria Garcia"}, {"entity_type", "patient"}})});
  ASSERT_EQ(t["steps"].size(), 1u);
  EXPECT_EQ(t["steps"][0]["title"], "Maria Garcia (p_mg_1962)");
}

}  // namespace
}  // namespace reins

#include "pipeline/event_text.h"

#include "domain/json_parse.h"
#include "domain/json_text.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

// Strings that need escaping, and one that is not UTF-8, wherever a writer takes text.
const char* const kAwkward = "say \"hi\"\\\n caf\xc3\xa9 \xff";

// Each writer's text is, byte for byte, the DOM's compact dump: the DOM each replaced.
void ExpectWrittenAs(const EventData& data, const Json& dom) {
  EXPECT_EQ(data.text(), JsonText(dom));
  EXPECT_EQ(data.json(), ParseJsonOrDiscarded(JsonText(dom)));
}

TEST(EventTextTest, ATurnsStartIsItsDom) {
  TurnInput in;
  in.speaker = kAwkward;
  in.say = kAwkward;
  auto dom = [](const TurnInput& i, const Json& reply, const Json& withheld = nullptr) {
    Json j = {{"turn_id", "t_1"}, {"speaker", i.speaker}, {"input", TurnInputToJson(i)}};
    if (!reply.is_null()) j["reply"] = reply;
    if (!withheld.is_null()) j["withheld"] = withheld;
    return j;
  };
  ExpectWrittenAs(TurnStartedData("t_1", in, nullptr, nullptr), dom(in, nullptr));

  // Every member an input may have, and a streamed reply's announcement.
  in.select = "u_doe";
  in.approve = false;
  in.cancel = true;
  in.page_context = {{"page", "/contacts"}, {"ids", {1, 2}}};
  in.idempotency_key = "k-1";
  in.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  in.words = kAwkward;
  const Json reply = {{"stream", "whole"}, {"held_by", "audit.enabled"}};
  ExpectWrittenAs(TurnStartedData("t_1", in, reply, nullptr), dom(in, reply));
  // The tools withheld from the model (a changed MCP tool), as WithheldTools gives them.
  const Json withheld = Json::array({{{"tool", "refill"}, {"why", "its description changed since the lock was written"}}});
  ExpectWrittenAs(TurnStartedData("t_1", in, reply, withheld), dom(in, reply, withheld));
}

TEST(EventTextTest, AModelCallIsItsDom) {
  const ToolChoice choice = ToolChoice::Named("lookup");
  ExpectWrittenAs(ModelCallData("openai", Purpose::kChat, choice),
                  {{"purpose", "chat"}, {"tool_choice", "tool:lookup"}, {"model", "openai"}});
  ExpectWrittenAs(ModelCallData(kAwkward, Purpose::kAudit, ToolChoice::Auto(), "s1", "length"),
                  {{"purpose", "audit"}, {"tool_choice", "auto"}, {"model", kAwkward}, {"step", "s1"}, {"repeat", "length"}});
}

TEST(EventTextTest, AModelResponseIsItsDom) {
  ModelResponse r;
  r.text = kAwkward;
  ExpectWrittenAs(ModelResponseData(1, r), {{"response", 1}, {"text", kAwkward}, {"tool_calls", Json::array()}});

  r.tool_calls.push_back({"call_1", "lookup", R"({"city":"Paris"})"});
  r.tool_calls.push_back({"call \"2\"", kAwkward, "not json"});
  r.usage = {104, 7};
  r.finish = FinishReason::kLength;
  Json calls = Json::array();
  for (const ToolCall& c : r.tool_calls) calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments_text}});
  ExpectWrittenAs(ModelResponseData(2, r), {{"response", 2},
                                            {"text", kAwkward},
                                            {"tool_calls", calls},
                                            {"usage", {{"input_tokens", 104}, {"output_tokens", 7}}},
                                            {"finish", "length"}});
}

TEST(EventTextTest, AnExecutedCallIsItsDom) {
  ToolCall call{"call_1", "lookup", R"({"city":"Paris"})"};
  call.args = {{"city", "Paris"}, {"note", kAwkward}};
  ResultEnvelope result;
  result.data = {{"temp", 21}, {"sky", kAwkward}};
  const std::string envelope = EnvelopeText(result);
  auto dom = [&](const Json& args, const ResultEnvelope& r) {
    return Json{{"call_id", call.id}, {"name", call.name},   {"args", args},          {"response", 2},
                {"position", 1},      {"result", EnvelopeToJson(r)},                  {"success", r.success},
                {"next_action", NextActionName(r.next_action)}, {"latency_ms", 35}, {"may_clarify", true}};
  };
  ExpectWrittenAs(ToolExecutedData(call, 2, 1, true, result, envelope, 35), dom(call.args, result));

  // Arguments that were not JSON are kept as the model's text; a failure as what it says.
  call.args_valid = false;
  call.arguments_text = kAwkward;
  ResultEnvelope failed = ResultEnvelope::Failure("no such city");
  ExpectWrittenAs(ToolExecutedData(call, 2, 1, true, failed, EnvelopeText(failed), 35), dom(kAwkward, failed));
}

TEST(EventTextTest, AFinalReplyAndTheTurnsEndAreTheirDoms) {
  ExpectWrittenAs(ReplyFinalData(kAwkward, std::nullopt), {{"text", kAwkward}});
  ExpectWrittenAs(ReplyFinalData("Done.", size_t{3}), {{"text", "Done."}, {"streamed", 3}});
  ExpectWrittenAs(TurnCompletedData(TurnStatus::kAwaitingApproval, TurnPhase::kAwaitingApproval),
                  {{"status", "awaiting_approval"}, {"phase", TurnPhaseName(TurnPhase::kAwaitingApproval)}});
}

// The data a turn holds is text: an event made from a DOM holds its compact dump, and
// reads back as the same value.
TEST(EventTextTest, EventDataFromADomHoldsItsTextAndReadsBack) {
  const Json dom = {{"b", {1, 2.5, nullptr}}, {"a", kAwkward}};
  const EventData data = dom;
  EXPECT_EQ(data.text(), JsonText(dom));
  EXPECT_EQ(data.json(), ParseJsonOrDiscarded(JsonText(dom)));
  EXPECT_TRUE(data.is_object());
  EXPECT_TRUE(data.contains("b"));
  EXPECT_FALSE(data.contains("c"));
  EXPECT_EQ(data.value("missing", 7), 7);
  EXPECT_EQ(EventData().text(), "{}");
  // Equal values are equal data, whatever order their texts list the members in.
  EXPECT_EQ(EventData::FromText(R"({"b":1,"a":2})"), EventData({{"a", 2}, {"b", 1}}));
  EXPECT_FALSE(EventData::FromText(R"({"a":1})") == EventData({{"a", 2}}));
}

// The text sits behind one pointer, its length first: copies are deep, a move leaves
// "{}" behind, and any text (empty, with NUL bytes, long) reads back byte for byte.
TEST(EventTextTest, EventDataCopiesMovesAndKeepsAnyText) {
  static constexpr char kWithNul[] = "{\"a\":\"x\0y\"}";
  const std::string with_nul(kWithNul, sizeof kWithNul - 1);
  const std::string long_text = JsonText(Json{{"text", std::string(100000, 'z')}});
  for (const std::string& text : {std::string(), std::string("{}"), with_nul, long_text}) {
    EventData original = EventData::FromText(text);
    EXPECT_EQ(original.text(), text);
    EventData copy = original;
    EXPECT_EQ(copy.text(), original.text());
    if (!text.empty() && text != "{}") {
      EXPECT_NE(copy.text().data(), original.text().data());  // its own block
    }
    EventData assigned;
    assigned = copy;
    EXPECT_EQ(assigned.text(), original.text());
    EventData moved = std::move(copy);
    EXPECT_EQ(moved.text(), original.text());
    EXPECT_EQ(copy.text(), "{}");  // NOLINT(bugprone-use-after-move): a moved-from datum is the empty object
    assigned = assigned;           // self-assignment keeps the text
    EXPECT_EQ(assigned.text(), original.text());
  }
  EXPECT_FALSE(EventData::FromText("").is_object());
  EXPECT_EQ(sizeof(TraceEvent), 24u);  // what a turn's vector of events holds per event
}

}  // namespace
}  // namespace reins

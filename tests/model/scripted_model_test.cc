#include "model/scripted_model.h"

#include <gtest/gtest.h>

#include "support/run_sync.h"

namespace reins {
namespace {

using testing::RunSync;

ModelRequest Request(int turn, std::vector<Message> messages, Purpose purpose = Purpose::kChat,
                     std::string user_text = "") {
  ModelRequest r;
  r.turn = turn;
  r.purpose = purpose;
  r.messages = std::move(messages);
  r.user_text = std::move(user_text);
  return r;
}

TEST(ScriptedModelTest, TakesTheFirstUnusedMatchingReply) {
  ScriptedModel model(Json::parse(R"([
    {"when": {"turn": 1}, "text": "first"},
    {"when": {"turn": 1}, "text": "second"},
    {"text": "fallback", "repeat": true}])"));
  auto r1 = RunSync(model.Complete(Request(1, {Message::User("hi")})));
  auto r2 = RunSync(model.Complete(Request(1, {Message::User("hi")})));
  auto r3 = RunSync(model.Complete(Request(1, {Message::User("hi")})));
  auto r4 = RunSync(model.Complete(Request(2, {Message::User("hi")})));
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok() && r4.ok());
  EXPECT_EQ(r1->text, "first");
  EXPECT_EQ(r2->text, "second");
  EXPECT_EQ(r3->text, "fallback");
  EXPECT_EQ(r4->text, "fallback");
}

TEST(ScriptedModelTest, MatchesLastAfterToolUserMatchesAndPurpose) {
  ScriptedModel model(Json::parse(R"([
    {"when": {"last": "tool", "after_tool": "lookup"}, "text": "after lookup"},
    {"when": {"user_matches": "(?i)pray", "purpose": "chat"}, "text": "prayer"}])"));
  auto none = RunSync(model.Complete(Request(1, {Message::User("hello")}, Purpose::kChat, "hello")));
  EXPECT_FALSE(none.ok());
  auto prayer = RunSync(model.Complete(Request(1, {Message::User("x")}, Purpose::kChat, "Please PRAY for me")));
  ASSERT_TRUE(prayer.ok());
  EXPECT_EQ(prayer->text, "prayer");
  auto tool = RunSync(model.Complete(
      Request(1, {Message::User("x"), Message::Assistant("", {}), Message::Tool("c1", "lookup", "{}", false)})));
  ASSERT_TRUE(tool.ok());
  EXPECT_EQ(tool->text, "after lookup");
}

TEST(ScriptedModelTest, NoMatchSaysWhichCallFoundNothing) {
  ScriptedModel model(Json::array());
  auto r = RunSync(model.Complete(Request(3, {Message::User("Tell John hi")}, Purpose::kPlan)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "scripted model has no reply for call 1 (turn 3, purpose plan, last message: user \"Tell John hi\")");
  ASSERT_EQ(model.calls().size(), 1u);
  EXPECT_EQ(model.calls()[0].reply, -1);
}

TEST(ScriptedModelTest, RendersToolCallsWithIdsAndRawArguments) {
  ScriptedModel model(Json::parse(R"([{"tool_calls": [
      {"name": "a", "args": {"x": 1}}, {"name": "b", "args_raw": "{broken", "id": "mine"}]}])"));
  auto r = RunSync(model.Complete(Request(1, {Message::User("go")})));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[0].id, "call_1_0");
  EXPECT_EQ(r->tool_calls[0].arguments_text, R"({"x":1})");
  EXPECT_TRUE(r->tool_calls[0].args_valid);
  EXPECT_EQ(r->tool_calls[1].id, "mine");
  EXPECT_FALSE(r->tool_calls[1].args_valid);
}

TEST(ScriptedModelTest, TurnRepliesComeFirstAndRecordToolChoice) {
  ScriptedModel model(Json::parse(R"([{"text": "general", "repeat": true}])"));
  model.AddTurnReplies(2, Json::parse(R"([{"text": "turn two only"}])"));
  ModelRequest r2 = Request(2, {Message::User("x")});
  r2.tool_choice = ToolChoice::Named("lookup");
  EXPECT_EQ(RunSync(model.Complete(Request(1, {Message::User("x")})))->text, "general");
  EXPECT_EQ(RunSync(model.Complete(r2))->text, "turn two only");
  EXPECT_EQ(model.calls()[1].tool_choice.ToString(), "tool:lookup");
}

TEST(ScriptedModelTest, JsonAndRawReplies) {
  ScriptedModel model(Json::parse(R"([{"json": {"steps": []}}, {"raw": "{not json"}])"));
  auto j = RunSync(model.Complete(Request(1, {Message::User("x")})));
  ASSERT_TRUE(j->json.has_value());
  EXPECT_EQ((*j->json)["steps"], Json::array());
  auto raw = RunSync(model.Complete(Request(1, {Message::User("x")})));
  EXPECT_FALSE(raw->json.has_value());
  EXPECT_EQ(raw->text, "{not json");
}

}  // namespace
}  // namespace reins

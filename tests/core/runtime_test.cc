// The governed loop end to end through Runtime: scripted model, fixture tools, a real
// in-memory SQLite store.
#include "reins/runtime.h"

#include <gtest/gtest.h>

#include "support/runtime_harness.h"

namespace reins {
namespace {


constexpr const char* kAgent = R"(name: t
system_prompt: Be brief.
model: { provider: scripted }
limits: { max_rounds: 4 }
tools:
  - name: lookup
    may_clarify: true
    entities: { produces: { contact: "$.data.contacts[*].id" } }
    input_schema: { type: object, properties: { q: { type: string } }, required: [q] }
  - name: send
    entities: { consumes: { to: contact } }
    input_schema: { type: object, properties: { to: { type: string } }, required: [to] }
  - name: note
    input_schema: { type: object }
)";

constexpr const char* kTwoJohns = R"([{"result": {"success": true, "next_action": "clarification_needed",
  "data": {"contacts": [{"id": "u_doe"}, {"id": "u_smith"}]},
  "clarification": {"type": "contact", "question": "Which John?",
    "options": [{"id": "u_doe", "title": "John Doe"}, {"id": "u_smith", "title": "John Smith"}]}}}])";

class RuntimeTest : public testing::RuntimeHarness {
 protected:
  void Build(const std::string& replies, const std::map<std::string, std::string>& fixtures,
             const std::string& store_url = "sqlite::memory:") {
    RuntimeHarness::Build(kAgent, replies, fixtures, store_url);
  }
};

TEST_F(RuntimeTest, ClarificationStopsTheChainAndTheTurnWithoutAnotherModelCall) {
  Build(R"([{"tool_calls": [{"name": "lookup", "args": {"q": "John"}}, {"name": "send", "args": {"to": "u_doe"}}]}])",
        {{"lookup", kTwoJohns}, {"send", R"([{"result": {}}])"}});
  auto r = Say("Tell John hi");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kAwaitingClarification);
  EXPECT_EQ(r->reply, "Which John?");
  EXPECT_EQ(r->model_calls, 1);
  EXPECT_EQ(Calls("send"), 0);
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[1].status, ToolOutcome::Status::kSkipped);
  EXPECT_EQ(r->tools[1].reason, "truncated");
  ASSERT_TRUE(r->clarification);
  EXPECT_EQ(r->clarification->entity_type, "contact");
}

TEST_F(RuntimeTest, ACancelInputWithdrawsThePendingClarification) {
  Build(R"([{"tool_calls": [{"name": "lookup", "args": {"q": "John"}}]}])", {{"lookup", kTwoJohns}});
  ASSERT_TRUE(Say("Tell John hi").ok());
  TurnInput cancel;
  cancel.speaker = "api";
  cancel.cancel = true;
  auto r = Run(cancel);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCancelled);
  EXPECT_EQ(recorder_->requests.size(), 1u);  // no model call
  auto stale = Select("u_doe");
  EXPECT_FALSE(stale.ok()) << "the clarification should be gone";
  // The cancel is not a conversational turn: the history holds no empty user message.
  auto messages = runtime_->store().LoadMessages(session_);
  ASSERT_TRUE(messages.ok());
  for (const Message& m : *messages) EXPECT_FALSE(m.role == Role::kUser && m.text.empty());
}

TEST_F(RuntimeTest, SelectBindsTheChosenIdAndRefusesTheOtherCandidate) {
  Build(R"([{"when": {"turn": 1}, "tool_calls": [{"name": "lookup", "args": {"q": "John"}}]},
            {"when": {"turn": 2, "last": "user"}, "tool_calls": [{"name": "send", "args": {"to": "u_smith"}}]},
            {"when": {"turn": 2, "last": "tool"}, "text": "I could not send it."}])",
        {{"lookup", kTwoJohns}, {"send", R"([{"result": {}}])"}});
  ASSERT_TRUE(Say("Tell John hi").ok());
  auto r = Select("u_doe");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("send"), 0);
  ASSERT_EQ(r->tools.size(), 1u);
  EXPECT_EQ(r->tools[0].status, ToolOutcome::Status::kRejected);
  EXPECT_EQ(r->tools[0].reason, "provenance");
  EXPECT_NE(r->tools[0].message.find("u_doe"), std::string::npos) << r->tools[0].message;
}

TEST_F(RuntimeTest, SelectWithAnUnknownOptionIsRefusedAndChangesNothing) {
  Build(R"([{"tool_calls": [{"name": "lookup", "args": {"q": "John"}}]}])", {{"lookup", kTwoJohns}});
  ASSERT_TRUE(Say("Tell John hi").ok());
  auto bad = Select("u_nobody");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("u_doe, u_smith"), std::string::npos) << bad.status().message();
  auto turns = runtime_->store().LoadTurns(session_);
  ASSERT_TRUE(turns.ok());
  EXPECT_EQ(turns->size(), 1u);
  // The clarification is still pending: a valid choice is accepted afterwards.
  EXPECT_TRUE(Select("u_doe").ok());
  // With nothing pending, select is a state conflict.
  EXPECT_EQ(Select("u_doe").status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(RuntimeTest, ErrorResultStopsTheChainAndTheModelSeesItMarkedAsError) {
  Build(R"([{"when": {"last": "user"}, "tool_calls": [{"name": "note", "args": {}}, {"name": "note", "args": {"n": 2}}]},
            {"when": {"last": "tool"}, "text": "The note service is down."}])",
        {{"note", R"([{"error": "database unavailable"}])"}});
  auto r = Say("take a note");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("note"), 1);
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_FALSE(r->tools[0].result->success);
  EXPECT_EQ(r->tools[1].reason, "chain_stopped");
  auto history = runtime_->store().LoadMessages(session_);
  ASSERT_TRUE(history.ok());
  // user, assistant(calls), tool(error), tool(skipped), assistant(text)
  ASSERT_EQ(history->size(), 5u);
  EXPECT_TRUE((*history)[2].is_error);
  EXPECT_NE((*history)[2].text.find("database unavailable"), std::string::npos);
}

TEST_F(RuntimeTest, CompleteEndsWithExactlyOneToolsOffCall) {
  Build(R"([{"when": {"last": "user"}, "tool_calls": [{"name": "note", "args": {}}, {"name": "note", "args": {}}]},
            {"when": {"last": "tool"}, "text": "Noted.", "tool_calls": [{"name": "note", "args": {}}]}])",
        {{"note", R"([{"result": {"success": true, "next_action": "complete"}}])"}});
  auto r = Say("take a note");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reply, "Noted.");
  EXPECT_EQ(Calls("note"), 1);  // the second call of the response and the one after `complete` never run
  ASSERT_EQ(model_->calls().size(), 2u);
  EXPECT_EQ(model_->calls()[1].tool_choice.ToString(), "none");
}

TEST_F(RuntimeTest, MaxRoundsFailsClearlyInsteadOfLooping) {
  Build(R"([{"repeat": true, "tool_calls": [{"name": "note", "args": {}}]}])", {{"note", R"([{"result": {}}])"}});
  auto r = Say("loop");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kFailed);
  EXPECT_EQ(r->model_calls, 4);
  EXPECT_NE(r->error.find("max_rounds = 4"), std::string::npos);
}

TEST_F(RuntimeTest, ModelFailureIsAFailedTurnThatIsStillRecorded) {
  Build("[]", {});
  auto r = Say("hello");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kFailed);
  EXPECT_NE(r->error.find("scripted model has no reply"), std::string::npos);
  EXPECT_EQ(runtime_->store().LoadTurns(session_)->size(), 1u);
}

TEST_F(RuntimeTest, SessionSurvivesARestartOnAFileStore) {
  std::string path = ::testing::TempDir() + "runtime_restart_test.db";
  std::remove(path.c_str());
  std::string replies = R"([{"when": {"turn": 1}, "tool_calls": [{"name": "lookup", "args": {"q": "John"}}]},
      {"when": {"turn": 2, "last": "user"}, "tool_calls": [{"name": "send", "args": {"to": "u_doe"}}]},
      {"when": {"turn": 2, "last": "tool"}, "text": "Sent to John Doe."}])";
  std::map<std::string, std::string> fixtures = {{"lookup", kTwoJohns}, {"send", R"([{"result": {}}])"}};
  Build(replies, fixtures, "sqlite:" + path);
  ASSERT_TRUE(Say("Tell John hi").ok());
  std::string session = session_;
  Build(replies, fixtures, "sqlite:" + path);  // a new runtime: nothing cached
  session_ = session;
  auto r = Select("u_doe");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(r->turn_number, 2);
  EXPECT_EQ(Calls("send"), 1);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace reins

namespace reins {
namespace {

TEST(RuntimeCreateTest, NeedsAModelAndAStore) {
  AgentConfig config;
  config.name = "x";
  RuntimeParts parts;
  EXPECT_EQ(Runtime::Create(config, parts).status().code(), StatusCode::kInvalidArgument);
  parts.model = std::make_shared<ScriptedModel>(Json::array());
  EXPECT_EQ(Runtime::Create(config, parts).status().code(), StatusCode::kInvalidArgument);
  parts.store = std::shared_ptr<Store>(OpenStore("sqlite::memory:").value().release());
  EXPECT_TRUE(Runtime::Create(config, parts).ok());
}

}  // namespace
}  // namespace reins

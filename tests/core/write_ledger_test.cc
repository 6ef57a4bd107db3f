// The write-ahead record of immediate writes (pipeline/write_ledger.h; I5 across
// crashes): what a turn records around a write call, and what a retry of the turn does
// with what an earlier try left. An earlier try that died is stood in for by the record
// it would have left in the store (BeginWrite under the key the retry computes); the
// real kill -9 runs through `reins serve` in tests/server/writes_e2e_test.cc.
#include <gtest/gtest.h>

#include "pipeline/write_ledger.h"
#include "support/runtime_harness.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: cards
system_prompt: You send cards.
model: { provider: scripted }
tools:
  - name: find_friend
    annotations: { readOnlyHint: true }
    input_schema: { type: object, properties: { name: { type: string } } }
  - name: send_card
    title: card
    timing: immediate
    input_schema: { type: object, properties: { to: { type: string } }, required: [to] }
  - name: book_table
    title: table booking
    timing: immediate
    annotations: { idempotentHint: true }
    input_schema: { type: object, properties: { guests: { type: integer } }, required: [guests] }
  - name: ring_bell
    title: bell
    timing: immediate
    timeout_ms: 1000
    input_schema: { type: object }
)";

constexpr const char* kReplies = R"([
  {"when": {"last": "user", "user_matches": "card"}, "repeat": true,
   "tool_calls": [{"name": "find_friend", "args": {"name": "Ana"}}, {"name": "send_card", "args": {"to": "Ana"}}]},
  {"when": {"last": "user", "user_matches": "table"}, "repeat": true,
   "tool_calls": [{"name": "book_table", "args": {"guests": 4}}]},
  {"when": {"last": "user", "user_matches": "bell"}, "repeat": true, "tool_calls": [{"name": "ring_bell", "args": {}}]},
  {"when": {"last": "tool"}, "repeat": true, "text": "Anything else?"}])";

class WriteLedgerTest : public testing::RuntimeHarness {
 protected:
  void SetUp() override {
    Build(kAgent, kReplies,
          {{"find_friend", R"([{"result": {"data": {"name": "Ana"}}}])"},
           {"send_card", R"([{"result": {"data": {"sent": "card_1"}}}])"},
           {"book_table", R"([{"result": {"data": {"booking": "b_1"}}}])"},
           {"ring_bell", R"([{"latency_ms": 5000, "result": {"data": {"rang": true}}}])"}});
  }
  Result<TurnResult> Keyed(const std::string& text, const std::string& key) {
    TurnInput in;
    in.say = text;
    in.idempotency_key = key;
    return Run(std::move(in));
  }
  std::vector<WriteRecord> Writes() { return runtime_->store().LoadWrites(session_).value(); }
  // What an earlier try of the turn under `turn_key` left for its first write.
  void EarlierTry(const std::string& turn_key, const std::string& tool, const Json& args, WriteRecord::State state,
                  const Json& result = nullptr) {
    WriteRecord r;
    r.session_id = session_;
    r.key = WriteLedger::KeyOf(session_, "key " + turn_key, 0, tool, args.dump());
    r.turn_id = "t_earlier";
    r.tool = tool;
    r.args = args;
    ASSERT_TRUE(runtime_->store().BeginWrite(r).value() == std::nullopt);
    if (state == WriteRecord::State::kRunning) return;
    r.state = state;
    r.result = result;
    ASSERT_TRUE(runtime_->store().FinishWrite(r).ok());
  }
  static const TraceEvent* Find(const TurnResult& r, const std::string& type, const std::string& name) {
    for (const TraceEvent& e : r.events) {
      if (e.name() == type && e.data.value("name", "") == name) return &e;
    }
    return nullptr;
  }
};

TEST_F(WriteLedgerTest, AWriteIsRecordedBeforeItRunsAndItsOutcomeAfter) {
  Result<TurnResult> r = Keyed("Send Ana a card", "k1");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Calls("send_card"), 1);
  const std::vector<WriteRecord> writes = Writes();
  ASSERT_EQ(writes.size(), 1u) << "the read (readOnlyHint) is not recorded";
  EXPECT_EQ(writes[0].tool, "send_card");
  EXPECT_EQ(writes[0].state, WriteRecord::State::kSucceeded);
  EXPECT_EQ(writes[0].attempts, 1);
  EXPECT_EQ(writes[0].key, WriteLedger::KeyOf(session_, "key k1", 0, "send_card", R"({"to":"Ana"})"));
  EXPECT_EQ(writes[0].result["data"]["sent"], "card_1");
  const TraceEvent* ran = Find(*r, "tool.executed", "send_card");
  ASSERT_NE(ran, nullptr);
  EXPECT_EQ(ran->data.value("write_key", ""), writes[0].key);
  EXPECT_FALSE(ran->data.contains("replayed"));
  const TraceEvent* read = Find(*r, "tool.executed", "find_friend");
  ASSERT_NE(read, nullptr);
  EXPECT_FALSE(read->data.contains("write_key"));
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[1].idempotency_key, writes[0].key);
}

TEST_F(WriteLedgerTest, ARetryGetsTheRecordedOutcomeAndRunsNothing) {
  EarlierTry("k2", "send_card", {{"to", "Ana"}}, WriteRecord::State::kSucceeded,
             Json{{"success", true}, {"next_action", "continue"}, {"data", {{"sent", "card_from_the_first_try"}}}});
  Result<TurnResult> r = Keyed("Send Ana a card", "k2");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("send_card"), 0) << "the write is not run again";
  EXPECT_EQ(Calls("find_friend"), 1) << "reads run as they always do";
  const TraceEvent* replayed = Find(*r, "tool.executed", "send_card");
  ASSERT_NE(replayed, nullptr);
  EXPECT_EQ(replayed->data.value("replayed", false), true);
  EXPECT_EQ(replayed->data.json()["result"]["data"]["sent"], "card_from_the_first_try");
  // The model was given that outcome as the call's result.
  EXPECT_NE(recorder_->requests.back().messages.back().text.find("card_from_the_first_try"), std::string::npos);
  ASSERT_EQ(Writes().size(), 1u);
  EXPECT_EQ(Writes()[0].attempts, 1);
}

TEST_F(WriteLedgerTest, AnUncertainWriteWhoseBackendTakesNoKeyIsNotRunAndThePersonIsTold) {
  EarlierTry("k3", "send_card", {{"to", "Ana"}}, WriteRecord::State::kRunning);
  Result<TurnResult> r = Keyed("Send Ana a card", "k3");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("send_card"), 0);
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[1].status, ToolOutcome::Status::kSkipped);
  EXPECT_EQ(r->tools[1].reason, "uncertain");
  ASSERT_NE(Find(*r, "write.uncertain", "send_card"), nullptr);
  EXPECT_EQ(r->reply,
            "Anything else? I can't tell whether the card went through: it was interrupted while it ran. Please check "
            "before asking for it again.");
  ASSERT_EQ(Writes().size(), 1u);
  EXPECT_EQ(Writes()[0].state, WriteRecord::State::kUncertain);
  EXPECT_EQ(Writes()[0].attempts, 1);
  // The model is told why, in the call's one result (I10).
  bool told = false;
  for (const Message& m : recorder_->requests.back().messages) {
    told |= m.role == Role::kTool && m.tool_name == "send_card" && m.text.find("may or may not") != std::string::npos;
  }
  EXPECT_TRUE(told);
}

TEST_F(WriteLedgerTest, AnUncertainWriteWhoseBackendTakesAKeyRunsAgainUnderIt) {
  EarlierTry("k4", "book_table", {{"guests", 4}}, WriteRecord::State::kRunning);
  Result<TurnResult> r = Keyed("A table for four", "k4");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("book_table"), 1);
  const TraceEvent* ran = Find(*r, "tool.executed", "book_table");
  ASSERT_NE(ran, nullptr);
  EXPECT_EQ(ran->data.value("attempt", 0), 2);
  ASSERT_EQ(Writes().size(), 1u);
  EXPECT_EQ(Writes()[0].state, WriteRecord::State::kSucceeded);
  EXPECT_EQ(Writes()[0].attempts, 2);
  EXPECT_EQ(r->reply, "Anything else?");
}

// A write that does not answer in time may have taken effect: its record stays running
// (a retry of the turn treats it as an interrupted try) and the person is told.
TEST_F(WriteLedgerTest, AWriteThatTimesOutIsUncertainNotFailed) {
  Result<TurnResult> r = Keyed("Ring the bell", "k5");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tools.size(), 1u);
  EXPECT_EQ(r->tools[0].status, ToolOutcome::Status::kExecuted);
  EXPECT_EQ(r->tools[0].reason, "uncertain");
  EXPECT_EQ(r->reply,
            "Anything else? I can't tell whether the bell went through: it did not answer in time. Please check before "
            "asking for it again.");
  ASSERT_EQ(Writes().size(), 1u);
  EXPECT_EQ(Writes()[0].state, WriteRecord::State::kRunning);
}

TEST_F(WriteLedgerTest, TheKeyFollowsWhatTheClientRetriesAndNothingElse) {
  const std::string a = WriteLedger::KeyOf("s_1", "key k", 0, "send_card", R"({"to":"Ana"})");
  EXPECT_EQ(a, WriteLedger::KeyOf("s_1", "key k", 0, "send_card", R"({"to":"Ana"})"));
  EXPECT_NE(a, WriteLedger::KeyOf("s_2", "key k", 0, "send_card", R"({"to":"Ana"})"));
  EXPECT_NE(a, WriteLedger::KeyOf("s_1", "key j", 0, "send_card", R"({"to":"Ana"})"));
  EXPECT_NE(a, WriteLedger::KeyOf("s_1", "key k", 1, "send_card", R"({"to":"Ana"})"));
  EXPECT_NE(a, WriteLedger::KeyOf("s_1", "key k", 0, "send_note", R"({"to":"Ana"})"));
  EXPECT_NE(a, WriteLedger::KeyOf("s_1", "key k", 0, "send_card", R"({"to":"Bo"})"));
  // A read, or a write a guard refused, before it in one try and not in another does not
  // move its key: only earlier writes of this very call count.
  EXPECT_TRUE(a.starts_with("w_"));
  // The chat door's rerun of a failed turn asks for the same request again.
  EXPECT_EQ(WriteLedger::RequestKey("chat-0a1b-rerun-2"), "chat-0a1b");
  EXPECT_EQ(WriteLedger::RequestKey("chat-0a1b"), "chat-0a1b");
  EXPECT_EQ(WriteLedger::RequestKey("mine-rerun-2"), "mine-rerun-2") << "a client's own key is one try";
  EXPECT_EQ(WriteLedger::RequestKey("chat-0a1b-rerun-x"), "chat-0a1b-rerun-x");
  // Two turns of one session without a key are two writes, though they ask the same.
  ASSERT_TRUE(Say("Send Ana a card").ok());
  ASSERT_TRUE(Say("Send Ana a card").ok());
  EXPECT_EQ(Calls("send_card"), 2);
  ASSERT_EQ(Writes().size(), 2u);
  EXPECT_NE(Writes()[0].key, Writes()[1].key);
}

TEST_F(WriteLedgerTest, AnOutcomeIsRecordedOnce) {
  WriteRecord r;
  r.session_id = session_;
  r.key = "w_once";
  r.turn_id = "t_1";
  r.tool = "send_card";
  r.args = Json{{"to", "Ana"}};
  Store& store = runtime_->store();
  ASSERT_EQ(store.BeginWrite(r).value(), std::nullopt);
  std::optional<WriteRecord> again = store.BeginWrite(r).value();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->state, WriteRecord::State::kRunning);
  r.state = WriteRecord::State::kSucceeded;
  EXPECT_TRUE(store.FinishWrite(r).ok());
  EXPECT_EQ(store.FinishWrite(r).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store.RetryWrite(r).code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace reins

// The governed loop end to end through Runtime: scripted model, fixture tools, a real
// in-memory SQLite store.
#include "reins/runtime.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

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
             const std::string& store_url = "sqlite::memory:", std::function<void(RuntimeParts&)> adjust = nullptr) {
    RuntimeHarness::Build(kAgent, replies, fixtures, store_url, std::move(adjust));
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

TEST_F(RuntimeTest, AFailedTurnLeavesNoUnansweredRequestInHistory) {
  Build(R"([{"when": {"turn": 2}, "text": "Hello again."}])", {});
  auto failed = Say("first");
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed->status, TurnStatus::kFailed);
  ASSERT_TRUE(Say("second").ok());
  const std::vector<Message>& sent = recorder_->requests.back().messages;
  // system, "first", the failure reply the person saw, "second"
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[1].text, "first");
  EXPECT_EQ(sent[2].role, Role::kAssistant);
  EXPECT_EQ(sent[2].text, failed->reply);
  EXPECT_EQ(sent[3].text, "second");
}

// Each call carries the whole history (lent to its request, pipeline/call_request.h),
// and the history is whole again after every call: the next call and the next turn
// see all of it, and nothing a call added.
TEST_F(RuntimeTest, EveryCallSeesTheWholeHistoryAndLeavesItWhole) {
  Build(R"([{"when": {"turn": 1, "last": "user"}, "tool_calls": [{"name": "note", "args": {}}]},
            {"when": {"turn": 1, "last": "tool"}, "text": "Noted."},
            {"when": {"turn": 2}, "text": "Still noted."}])",
        {{"note", R"([{"result": {"success": true}}])"}});
  ASSERT_EQ(Say("note this")->reply, "Noted.");
  ASSERT_EQ(Say("and again")->reply, "Still noted.");
  auto texts = [&](size_t request) {
    std::vector<std::string> out;
    for (const Message& m : recorder_->requests[request].messages) {
      out.push_back(std::string(RoleName(m.role)) + ":" + (m.tool_calls.empty() ? m.text : m.tool_calls[0].name));
    }
    return out;
  };
  ASSERT_EQ(recorder_->requests.size(), 3u);
  using V = std::vector<std::string>;
  EXPECT_EQ(texts(0), (V{"system:Be brief.", "user:note this"}));
  ASSERT_EQ(texts(1).size(), 4u);
  EXPECT_EQ(texts(1)[2], "assistant:note");
  EXPECT_EQ(texts(1)[3].rfind("tool:", 0), 0u);
  V second = texts(1);
  second.push_back("assistant:Noted.");
  second.push_back("user:and again");
  EXPECT_EQ(texts(2), second);
}

// A tool withheld from the model (an MCP tool its lock no longer matches, mcp_pins.h)
// is not among the tools a model request offers; a call to it all the same is refused
// as `withheld` and never runs; turn.started names it with the reason.
TEST_F(RuntimeTest, AWithheldToolIsNotOfferedAndItsCallIsRefused) {
  Build(R"([{"when": {"last": "user"}, "tool_calls": [{"name": "note", "args": {}}]},
            {"when": {"last": "tool"}, "text": "Could not note."}])",
        {{"note", R"([{"result": {"success": true}}])"}});
  std::vector<ToolDef> tools = runtime_->config()->tools;
  for (ToolDef& t : tools) {
    if (t.name == "note") t.withheld = "its description changed since the lock was written";
  }
  ASSERT_TRUE(runtime_->ReplaceTools(std::move(tools)).ok());
  auto r = Say("note this");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(recorder_->requests.empty());
  std::vector<std::string> offered;
  for (const ToolSpec& t : *recorder_->requests[0].tools) offered.push_back(t.name);
  EXPECT_EQ(offered, (std::vector<std::string>{"lookup", "send"}));
  EXPECT_EQ(Calls("note"), 0);
  ASSERT_EQ(r->tools.size(), 1u);
  EXPECT_EQ(r->tools[0].status, ToolOutcome::Status::kRejected);
  EXPECT_EQ(r->tools[0].reason, "withheld");
  const Json started = TraceEventToJson(r->events.front());
  EXPECT_EQ(started["data"]["withheld"],
            (Json::parse(R"([{"tool": "note", "why": "its description changed since the lock was written"}])")));
}

// A model that never answers its first call (it waits an hour on a timer of the turn's
// own io_context), then passes every later call on.
class HangsOnceModel final : public ModelProvider {
 public:
  explicit HangsOnceModel(std::shared_ptr<ModelProvider> then) : then_(std::move(then)) {}
  std::string_view Name() const override { return "hangs-once"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override {
    if (!waiting) {
      waiting = true;
      boost::asio::steady_timer hour(co_await boost::asio::this_coro::executor, std::chrono::hours(1));
      co_await hour.async_wait(boost::asio::use_awaitable);
    }
    co_return co_await then_->Complete(request);
  }
  bool waiting = false;

 private:
  std::shared_ptr<ModelProvider> then_;
};

// A turn whose coroutines are destroyed while its model answers (its io_context went
// away) was never stored: the next turn of the session sees nothing of it, though the
// turn had added the person's message to the session's history and lent the history to
// its model call.
TEST_F(RuntimeTest, ATurnAbandonedWhileItsModelAnswersLeavesNothingBehind) {
  std::shared_ptr<HangsOnceModel> model;
  Build(R"([{"text": "Hello."}])", {}, "sqlite::memory:", [&](RuntimeParts& parts) {
    model = std::make_shared<HangsOnceModel>(recorder_);
    parts.model = model;
  });
  {
    boost::asio::io_context io;
    TurnInput first;
    first.say = "first";
    auto run = [](Runtime& runtime, std::string session, TurnInput in) -> Task<void> {
      (void)co_await runtime.RunTurn(session, std::move(in));
    };
    boost::asio::co_spawn(io, run(*runtime_, session_, std::move(first)), boost::asio::detached);
    for (int i = 0; i < 1000 && !model->waiting; ++i) io.run_one_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(model->waiting);
  }  // destroyed with the turn's coroutines suspended in it
  auto r = Say("second");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(runtime_->store().LoadTurns(session_)->size(), 1u) << "the abandoned turn was never stored";
  ASSERT_EQ(recorder_->requests.size(), 1u);
  const std::vector<Message>& sent = recorder_->requests[0].messages;
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].text, "second");
}

TEST_F(RuntimeTest, AReusedIdempotencyKeyWithAnotherRequestIsRefused) {
  Build(R"([{"repeat": true, "text": "Hi."}])", {});
  TurnInput first;
  first.say = "hello";
  first.idempotency_key = "k1";
  ASSERT_TRUE(Run(first).ok());
  TurnInput again = first;
  EXPECT_EQ(Run(again).status().code(), StatusCode::kAlreadyExists);
  again.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";  // retried from another trace
  EXPECT_EQ(Run(again).status().code(), StatusCode::kAlreadyExists);
  TurnInput other = first;
  other.say = "something else";
  auto refused = Run(other);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("different request"), std::string::npos) << refused.status().message();
  auto found = runtime_->store().FindTurnByKey(session_, "k1");
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ((*found)->turn_number, 1);
  EXPECT_EQ(runtime_->store().LoadTurns(session_)->size(), 1u);
}

TEST_F(RuntimeTest, EvictedSessionsAreReadBackFromTheStore) {
  std::string replies = R"([{"when": {"last": "user", "user_matches": "John"}, "repeat": true, "tool_calls": [{"name": "lookup", "args": {"q": "John"}}]},
      {"when": {"last": "user"}, "repeat": true, "tool_calls": [{"name": "send", "args": {"to": "u_doe"}}]},
      {"when": {"last": "tool"}, "repeat": true, "text": "Sent."}])";
  Build(replies, {{"lookup", kTwoJohns}, {"send", R"([{"result": {}}])"}}, "sqlite::memory:",
        [](RuntimeParts& parts) { parts.session_cache = 2; });
  std::vector<std::string> sessions = {session_};
  for (int i = 0; i < 3; ++i) sessions.push_back(runtime_->CreateSession().value());
  EXPECT_EQ(runtime_->cached_sessions(), 2u);
  for (const std::string& s : sessions) {
    session_ = s;
    ASSERT_TRUE(Say("Tell John hi").ok());
  }
  EXPECT_EQ(runtime_->cached_sessions(), 2u);
  for (const std::string& s : sessions) {  // each one's pending clarification came back from the store
    session_ = s;
    auto r = Select("u_doe");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->turn_number, 2);
  }
}

// The one check of a turn's input (reins/turn.h) that the HTTP API shares: the runtime
// refuses what it refuses, whoever built the input, and records nothing.
TEST_F(RuntimeTest, AMalformedInputIsRefusedBeforeAnythingIsRecorded) {
  Build(R"([{"text": "hi"}])", {});
  TurnInput nothing;
  EXPECT_EQ(Run(nothing).status().code(), StatusCode::kInvalidArgument);
  TurnInput no_speaker;
  no_speaker.speaker = "";
  no_speaker.say = "hi";
  EXPECT_EQ(Run(no_speaker).status().code(), StatusCode::kInvalidArgument);
  TurnInput spaced_key;
  spaced_key.say = "hi";
  spaced_key.idempotency_key = "a key";
  EXPECT_EQ(Run(spaced_key).status().message(), "an idempotency key is 1 to 200 printable ASCII characters without spaces");
  EXPECT_TRUE(runtime_->store().LoadTurns(session_)->empty());
  TurnInput cancel;
  cancel.cancel = true;  // a cancel needs nothing else
  EXPECT_TRUE(CheckTurnInput(cancel).ok());
  TurnResultBox none = testing::RunSync(runtime_->RunTurnOnHeap(session_, std::unique_ptr<TurnInput>()), clock_.get());
  EXPECT_EQ(none.result->status().code(), StatusCode::kInvalidArgument) << "no input at all";
}

// A session begun by its first turn (StartSession) is stored with that turn's commit:
// it exists once the turn does, with the turn's state, and goes on as any other, cached
// or read back after a restart.
TEST_F(RuntimeTest, AStartedSessionIsStoredWithItsFirstTurn) {
  const std::string path = ::testing::TempDir() + "runtime_started_session.db";
  std::remove(path.c_str());
  std::string replies = R"([{"when": {"turn": 1}, "tool_calls": [{"name": "lookup", "args": {"q": "John"}}]},
      {"when": {"turn": 2, "last": "user"}, "tool_calls": [{"name": "send", "args": {"to": "u_doe"}}]},
      {"when": {"turn": 2, "last": "tool"}, "text": "Sent to John Doe."}])";
  std::map<std::string, std::string> fixtures = {{"lookup", kTwoJohns}, {"send", R"([{"result": {}}, {"result": {}}])"}};
  Build(replies, fixtures, "sqlite:" + path);
  TurnInput first;
  first.say = "Tell John hi";
  Result<StartedSession> started =
      testing::RunSync(runtime_->StartSession(std::move(first), {{"channel", "web"}}, "acme"), clock_.get());
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(started->turn.status, TurnStatus::kAwaitingClarification);
  EXPECT_EQ(started->turn.turn_number, 1);
  testing::ExpectDocumented(started->turn.events);
  session_ = started->session_id;
  Result<SessionRecord> stored = runtime_->store().LoadSession(session_);
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(stored->tenant, "acme");
  EXPECT_EQ(stored->metadata, Json({{"channel", "web"}}));
  EXPECT_EQ(stored->turn_count, 1);
  EXPECT_TRUE(stored->state.contains("pending_clarification")) << stored->state.dump();
  EXPECT_EQ(runtime_->store().LoadTurns(session_)->size(), 1u);
  EXPECT_EQ(runtime_->sessions().KnownTenant(session_), "acme") << "known without a read";

  auto r = Select("u_doe");  // the cached session, as the first turn left it
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->turn_number, 2);
  EXPECT_EQ(Calls("send"), 1);

  Build(replies, fixtures, "sqlite:" + path);  // a new runtime, then another: read back from the store
  TurnInput again;
  again.say = "Tell John hi";
  started = testing::RunSync(runtime_->StartSession(std::move(again)), clock_.get());
  ASSERT_TRUE(started.ok()) << started.status().message();
  const std::string id = started->session_id;
  Build(replies, fixtures, "sqlite:" + path);
  session_ = id;
  auto read_back = Select("u_doe");
  ASSERT_TRUE(read_back.ok()) << read_back.status().message();
  EXPECT_EQ(read_back->turn_number, 2);
  std::remove(path.c_str());
}

// A first turn that is refused stores nothing, its session included; a streamed one
// has its session created first (its reply may stage writes before the commit).
TEST_F(RuntimeTest, AStartedSessionWhoseFirstTurnIsRefusedDoesNotExist) {
  Build(R"([{"repeat": true, "text": "Hi."}])", {});
  const size_t before = runtime_->store().ListSessions()->size();
  TurnInput nothing;
  EXPECT_EQ(testing::RunSync(runtime_->StartSession(std::move(nothing)), clock_.get()).status().code(),
            StatusCode::kInvalidArgument);
  TurnInput select;
  select.select = "u_doe";  // nothing to select from: refused as the turn is admitted
  EXPECT_EQ(testing::RunSync(runtime_->StartSession(std::move(select)), clock_.get()).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(runtime_->store().ListSessions()->size(), before);

  TurnInput streamed;
  streamed.say = "hello";
  std::vector<EventType> seen;
  streamed.on_event = [&seen](const TraceEvent& e) { seen.push_back(e.type); };
  Result<StartedSession> started = testing::RunSync(runtime_->StartSession(std::move(streamed)), clock_.get());
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(started->turn.reply, "Hi.");
  EXPECT_FALSE(seen.empty());
  EXPECT_EQ(runtime_->store().LoadSession(started->session_id)->turn_count, 1);
  EXPECT_EQ(runtime_->store().ListSessions()->size(), before + 1);
}

TEST_F(RuntimeTest, IdsAreTimeOrderedWith96RandomBits) {
  Build("[]", {});
  std::string a = runtime_->CreateSession().value();
  std::string b = runtime_->CreateSession().value();
  ASSERT_EQ(a.size(), 2u + 11u + 24u) << a;
  EXPECT_NE(a.substr(13), b.substr(13));
  EXPECT_EQ(a.substr(0, 13), b.substr(0, 13)) << "the same virtual millisecond";
  // Seeded (run, eval, fuzz): the same ids every time.
  auto seeded = [&] {
    Build("[]", {}, "sqlite::memory:", [](RuntimeParts& parts) { parts.id_seed = 42; });
    return runtime_->CreateSession().value();
  };
  EXPECT_EQ(seeded(), seeded());
}

TEST_F(RuntimeTest, ALongSessionSendsABoundedWindowBeforeAndAfterARestart) {
  const std::string path = ::testing::TempDir() + "runtime_long_session.db";
  std::remove(path.c_str());
  const std::string agent = "name: long\nmodel: { provider: scripted }\nlimits: { max_context_chars: 5000 }\n";
  const std::string replies = R"([{"repeat": true, "text": "Noted."}])";
  RuntimeHarness::Build(agent, replies, {}, "sqlite:" + path);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(Say(std::string(700, static_cast<char>('a' + i % 26))).ok());
  auto window = [&] {
    const std::vector<Message>& sent = recorder_->requests.back().messages;
    size_t chars = 0;
    for (const Message& m : sent) chars += m.text.size();
    EXPECT_LE(chars, 5000u);
    EXPECT_NE(sent[0].text.find("left out to fit the context limit"), std::string::npos);
    EXPECT_EQ(sent[1].role, Role::kUser);
    std::vector<std::string> texts;
    for (size_t i = 1; i < sent.size(); ++i) texts.push_back(sent[i].text);
    return texts;
  };
  std::vector<std::string> before = window();
  const std::string session = session_;
  RuntimeHarness::Build(agent, replies, {}, "sqlite:" + path);  // nothing cached: read back from the store
  session_ = session;
  ASSERT_TRUE(Say("one more").ok());
  std::vector<std::string> after = window();
  ASSERT_GE(after.size(), 3u);
  EXPECT_EQ(after.back(), "one more");
  // The same conversation, one turn on: the restart changed nothing the model sees.
  EXPECT_EQ(after[after.size() - 3], before.back());
  std::remove(path.c_str());
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

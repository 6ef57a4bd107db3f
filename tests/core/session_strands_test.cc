// Sessions on strands of their own: one Runtime driven from four threads, each session
// on its own strand, turns of many sessions in flight at once (the queue, the group
// commit, the session cache and the deferred runner shared between them), and turns
// of one session sent from several strands at once, which must still run one at a
// time, in order. Run it under TSan (make test-tsan) for the races it cannot see.
#include <atomic>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "config/agent_config_loader.h"
#include "model/scripted_model.h"
#include "reins/runtime.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: strands
system_prompt: Note it, then send it.
model: { provider: scripted }
tools:
  - name: note
    timing: immediate
    input_schema: { type: object }
  - name: send
    timing: deferred
    input_schema: { type: object, properties: { text: { type: string } }, required: [text] }
)";

// Answers from the request alone (no state, so any thread may call it): a person's
// message gets both calls, a tool result gets the reply, which names how many
// messages the model saw (each turn of a session sees one more exchange).
class StatelessModel final : public ModelProvider {
 public:
  std::string_view Name() const override { return "stateless"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override {
    ModelResponse r;
    const Message& last = request.messages.back();
    if (last.role == Role::kUser) {
      r.tool_calls.push_back({"c_note", "note", "{}", Json::object()});
      r.tool_calls.push_back({"c_send", "send", R"({"text":"hi"})", {{"text", "hi"}}});
    } else {
      r.text = "Done after " + std::to_string(request.messages.size()) + " messages.";
    }
    co_return r;
  }
};

class CountingTool final : public ToolBackend {
 public:
  Task<Result<Json>> Invoke(const ToolRequest&) override {
    calls.fetch_add(1);
    co_return Json{{"success", true}, {"data", Json::object()}};
  }
  std::atomic<int> calls = 0;
};

Task<void> Converse(Runtime& runtime, std::string session, int turns, std::vector<std::string>& replies) {
  for (int i = 0; i < turns; ++i) {
    TurnInput in;
    in.speaker = "user";
    in.say = "message " + std::to_string(i);
    Result<TurnResult> r = co_await runtime.RunTurn(session, std::move(in));
    replies.push_back(r.ok() ? std::string(TurnStatusName(r->status)) + ": " + r->reply : r.status().message());
  }
}

class SessionStrandsTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(std::make_shared<StatelessModel>(), {{"note", note_}, {"send", send_}}); }

  void Build(std::shared_ptr<ModelProvider> model, std::map<std::string, std::shared_ptr<ToolBackend>> tools) {
    Diagnostics diag;
    LocatedDoc doc = ParseYaml(kAgent, "agent.yaml", diag);
    AgentConfig config;
    ASSERT_TRUE(ParseAgentConfig(doc, "", ".", diag, &config)) << diag.Format();
    RuntimeParts parts;
    parts.model = std::move(model);
    auto store = OpenStore("sqlite::memory:");
    ASSERT_TRUE(store.ok()) << store.status().message();
    parts.store = std::move(store).value();
    parts.tool_backends = std::move(tools);
    auto runtime = Runtime::Create(std::move(config), std::move(parts));
    ASSERT_TRUE(runtime.ok()) << runtime.status().message();
    runtime_ = std::move(runtime).value();
  }

  // Runs `io` on four threads until its work is done.
  static void RunOnFourThreads(boost::asio::io_context& io) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) threads.emplace_back([&io] { io.run(); });
    for (std::thread& t : threads) t.join();
  }

  std::vector<std::string> NewSessions(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back(runtime_->CreateSession().value());
    return ids;
  }

  // `turns` turns of each session, one after another on a strand of the session's own,
  // every session at once on four threads: each session's replies.
  std::vector<std::vector<std::string>> ConverseOnStrands(const std::vector<std::string>& ids, int turns) {
    std::vector<std::vector<std::string>> replies(ids.size());
    boost::asio::io_context io(4);
    for (size_t i = 0; i < ids.size(); ++i) {
      boost::asio::co_spawn(boost::asio::make_strand(io), Converse(*runtime_, ids[i], turns, replies[i]),
                            boost::asio::detached);
    }
    RunOnFourThreads(io);
    return replies;
  }

  std::shared_ptr<CountingTool> note_ = std::make_shared<CountingTool>();
  std::shared_ptr<CountingTool> send_ = std::make_shared<CountingTool>();
  std::unique_ptr<Runtime> runtime_;
};


TEST_F(SessionStrandsTest, ManySessionsRunTheirTurnsInParallelEachInOrder) {
  constexpr int kSessions = 40;
  constexpr int kTurns = 5;
  const std::vector<std::string> ids = NewSessions(kSessions);
  const std::vector<std::vector<std::string>> replies = ConverseOnStrands(ids, kTurns);
  for (int i = 0; i < kSessions; ++i) {
    ASSERT_EQ(replies[i].size(), static_cast<size_t>(kTurns)) << ids[i];
    for (int t = 0; t < kTurns; ++t) {
      // system, then per earlier turn: user, assistant calls, 2 results, reply; then
      // this turn's user, calls and 2 results.
      EXPECT_EQ(replies[i][t], "completed: Done after " + std::to_string(2 + 5 * t + 3) + " messages.") << ids[i];
    }
    Result<SessionRecord> stored = runtime_->store().LoadSession(ids[i]);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->turn_count, kTurns);
  }
  EXPECT_EQ(note_->calls.load(), kSessions * kTurns);
  EXPECT_EQ(send_->calls.load(), kSessions * kTurns);  // each write once (await mode: before the reply)
}

// Three turns of one session sent at once from three strands (three connections of
// one client): they run one at a time, each seeing the ones before it.
TEST_F(SessionStrandsTest, TurnsOfOneSessionFromSeveralStrandsStillRunOneAtATime) {
  constexpr int kSessions = 12;
  constexpr int kSenders = 3;
  const std::vector<std::string> ids = NewSessions(kSessions);
  std::vector<std::vector<std::vector<std::string>>> replies(kSessions, std::vector<std::vector<std::string>>(kSenders));
  boost::asio::io_context io(4);
  for (int i = 0; i < kSessions; ++i) {
    for (int s = 0; s < kSenders; ++s) {
      boost::asio::co_spawn(boost::asio::make_strand(io), Converse(*runtime_, ids[i], 1, replies[i][s]),
                            boost::asio::detached);
    }
  }
  RunOnFourThreads(io);
  for (int i = 0; i < kSessions; ++i) {
    std::multiset<std::string> seen;
    for (int s = 0; s < kSenders; ++s) {
      ASSERT_EQ(replies[i][s].size(), 1u);
      seen.insert(replies[i][s][0]);
    }
    // One turn saw no earlier turn, one saw one, one saw two: never two at once.
    EXPECT_EQ(seen, (std::multiset<std::string>{"completed: Done after 5 messages.", "completed: Done after 10 messages.",
                                                "completed: Done after 15 messages."}))
        << ids[i];
    EXPECT_EQ(runtime_->store().LoadSession(ids[i])->turn_count, kSenders);
  }
}

// The scripted model and fixture tools of scenario files, served to turns on several
// threads (`reins serve --threads N` with a scripted agent, as the serve tests run).
TEST_F(SessionStrandsTest, TheScriptedModelAndFixturesServeTurnsFromSeveralThreads) {
  SystemClock clock;
  auto note = std::make_shared<FixtureBackend>("note", Json::parse(R"([{"result": {"success": true}}])"), clock);
  auto send = std::make_shared<FixtureBackend>("send", Json::parse(R"([{"result": {"success": true}}])"), clock);
  auto scripted = std::make_shared<ScriptedModel>(Json::parse(R"([
    {"when": {"last": "user"}, "repeat": true, "tool_calls": [{"name": "note", "args": {}}]},
    {"when": {"last": "tool"}, "repeat": true, "text": "Noted."}])"));
  runtime_.reset();
  Build(scripted, {{"note", note}, {"send", send}});
  constexpr int kSessions = 20;
  const std::vector<std::string> ids = NewSessions(kSessions);
  const std::vector<std::vector<std::string>> replies = ConverseOnStrands(ids, 3);
  for (int i = 0; i < kSessions; ++i) {
    EXPECT_EQ(replies[i], (std::vector<std::string>(3, "completed: Noted."))) << ids[i];
  }
  EXPECT_EQ(note->calls(), kSessions * 3);
  EXPECT_EQ(scripted->calls().size(), static_cast<size_t>(kSessions * 3 * 2));
}

}  // namespace
}  // namespace reins

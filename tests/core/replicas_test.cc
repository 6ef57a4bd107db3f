// Two runtimes on one PostgreSQL database, as two replicas behind a load balancer with
// no sticky sessions: a session's turns go to either, and each sees the session as the
// previous turn left it, its turns never interleave, and the floor holds across them.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/agent_config_loader.h"
#include "model/scripted_model.h"
#include "reins/runtime.h"
#include "support/run_sync.h"
#include "support/test_postgres.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: music
model: { provider: scripted }
floor: { enabled: true, default_ttl_s: 30 }
tools:
  - name: play
    may_clarify: true
    lease: { domain: music, ttl_s: 60 }
    entities: { produces: { track: "$.data.ids[*]" } }
    input_schema: { type: object, properties: { title: { type: string }, track: { type: string } } }
)";

constexpr const char* kPlay = R"([
  {"when": {"args": {"title": "Hallelujah"}}, "result": {"next_action": "clarification_needed",
    "data": {"ids": ["t1", "t2"]},
    "clarification": {"question": "Which one?", "options": [{"id": "t1"}, {"id": "t2"}]}}},
  {"when": {"args": {"title": "slow"}}, "result": {"success": true}, "latency_ms": 300},
  {"result": {"success": true, "next_action": "complete"}}])";

constexpr const char* kReplies = R"([
  {"when": {"last": "tool"}, "repeat": true, "text": "Playing."},
  {"when": {"turn": 1, "user_matches": "Hallelujah"}, "tool_calls": [{"name": "play", "args": {"title": "Hallelujah"}}]},
  {"when": {"user_matches": "slow"}, "repeat": true, "tool_calls": [{"name": "play", "args": {"title": "slow"}}]},
  {"when": {"last": "user"}, "repeat": true, "text": "Noted."}])";

// The model of one replica: scripted, keeping the history each request carried.
class SeeingModel final : public ModelProvider {
 public:
  SeeingModel() : inner_(Json::parse(kReplies)) {}
  std::string_view Name() const override { return "seeing"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override {
    last_history = request.messages;
    co_return co_await inner_.Complete(request);
  }
  std::vector<Message> last_history;

 private:
  ScriptedModel inner_;
};

struct Replica {
  std::shared_ptr<SeeingModel> model = std::make_shared<SeeingModel>();
  std::unique_ptr<Runtime> runtime;
};

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = testing::TestPostgres::Shared().Url(testing::TestPostgres::Shared().NewDatabase());
    a_ = Start();
    b_ = Start();
    session_ = a_.runtime->CreateSession().value();
  }
  Replica Start() {
    Diagnostics diag;
    AgentConfig config;
    EXPECT_TRUE(ParseAgentConfig(ParseYaml(kAgent, "agent.yaml", diag), "", ".", diag, &config)) << diag.Format();
    Replica r;
    RuntimeParts parts;
    parts.model = r.model;
    parts.clock = clock_;
    auto store = OpenStore(url_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    parts.store = std::move(store).value();
    parts.tool_backends["play"] = std::make_shared<FixtureBackend>("play", Json::parse(kPlay), *clock_);
    r.runtime = std::move(Runtime::Create(config, parts)).value();
    return r;
  }
  static TurnInput Said(const std::string& speaker, const std::string& text) {
    TurnInput in;
    in.speaker = speaker;
    in.say = text;
    return in;
  }
  Result<TurnResult> Run(Replica& r, TurnInput in) { return testing::RunSync(r.runtime->RunTurn(session_, std::move(in))); }
  static bool Saw(const SeeingModel& m, const std::string& text) {
    for (const Message& msg : m.last_history) {
      if (msg.text == text) return true;
    }
    return false;
  }

  std::shared_ptr<SystemClock> clock_ = std::make_shared<SystemClock>();
  std::string url_;
  Replica a_, b_;
  std::string session_;
};

TEST_F(ReplicasTest, EachReplicaSeesTheSessionAsThePreviousTurnLeftIt) {
  ASSERT_TRUE(Run(a_, Said("ana", "one")).ok());
  auto second = Run(b_, Said("ana", "two"));  // B never saw this session before
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->turn_number, 2);
  EXPECT_TRUE(Saw(*b_.model, "one"));
  auto third = Run(a_, Said("ana", "three"));  // A's cached copy stops at turn 1
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->turn_number, 3);
  EXPECT_TRUE(Saw(*a_.model, "two")) << "replica A answered from a stale copy of the session";
  auto turns = a_.runtime->store().LoadTurns(session_);
  ASSERT_EQ(turns->size(), 3u);
  EXPECT_EQ((*turns)[2].turn_number, 3);
}

TEST_F(ReplicasTest, TurnsOfOneSessionOnTwoReplicasNeverInterleave) {
  boost::asio::io_context io;
  std::optional<Result<TurnResult>> slow, quick;
  boost::asio::co_spawn(io, [&]() -> Task<void> { slow = co_await a_.runtime->RunTurn(session_, Said("ana", "play slow")); },
                        boost::asio::detached);
  boost::asio::co_spawn(io, [&]() -> Task<void> { quick = co_await b_.runtime->RunTurn(session_, Said("ana", "after")); },
                        boost::asio::detached);
  io.run();
  ASSERT_TRUE(slow->ok()) << slow->status().ToString();
  ASSERT_TRUE(quick->ok()) << quick->status().ToString();
  // Whichever claimed the session first ran alone; the other saw all of it.
  const bool slow_first = (*slow)->turn_number == 1;
  EXPECT_EQ((slow_first ? *quick : *slow)->turn_number, 2);
  if (slow_first) {
    EXPECT_TRUE(Saw(*b_.model, "Playing.")) << "the second turn ran beside the first";
  } else {
    EXPECT_TRUE(Saw(*a_.model, "Noted."));
  }
}

TEST_F(ReplicasTest, TheFloorHoldsAcrossReplicas) {
  auto asked = Run(a_, Said("ana", "Play Hallelujah"));  // Ana takes the floor through A
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  ASSERT_EQ(asked->status, TurnStatus::kAwaitingClarification);
  auto ben = Run(b_, Said("ben", "play something else"));  // Ben, through B
  ASSERT_TRUE(ben.ok()) << ben.status().ToString();
  EXPECT_EQ(ben->status, TurnStatus::kBlocked);
  TurnInput answer;
  answer.speaker = "ana";
  answer.select = "t1";
  auto answered = Run(b_, answer);  // Ana's answer, through B
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  EXPECT_EQ(answered->status, TurnStatus::kCompleted) << TurnResultToJson(*answered).dump();
}

TEST_F(ReplicasTest, AWriteAReplicaLeftInTheOutboxRunsOnAnotherOnceItSatQuiet) {
  // Replica A committed two turns, each with a deferred write, and died before running them.
  for (int n = 1; n <= 2; ++n) {
    TurnRecord t;
    t.session_id = session_;
    t.speaker = "ana";
    t.result.turn_id = "t_left" + std::to_string(n);
    t.result.turn_number = n;
    t.new_messages = {Message::User("play")};
    t.session_state = Json::object();
    ToolOutcome call;
    call.name = "play";
    call.args = Json{{"title", "x"}};
    call.status = ToolOutcome::Status::kDeferred;
    call.idempotency_key = t.result.turn_id + ":1:0";
    t.result.tools = {call};
    t.created_at_ms = clock_->NowMs() - (n == 1 ? 31'000 : 0);  // the second, just now
    ASSERT_TRUE(a_.runtime->store().CommitTurn(t).ok());
  }
  // B's sweep runs the quiet one; the fresh one may still be claimed by its own replica.
  auto ran = testing::RunSync(b_.runtime->ResumeOutbox(30'000));
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(*ran, 1);
  auto outbox = b_.runtime->store().LoadOutbox(session_);
  ASSERT_EQ(outbox->size(), 2u);
  EXPECT_EQ((*outbox)[0].status, "done");
  EXPECT_EQ((*outbox)[1].status, "pending");
  EXPECT_EQ(*testing::RunSync(b_.runtime->ResumeOutbox(30'000)), 0);  // done runs never again
}

}  // namespace
}  // namespace reins

// Three `reins serve` processes on one PostgreSQL database, as replicas behind a load
// balancer with no sticky sessions: any replica takes any request of any session, the
// floor, clarifications, approvals, idempotent retries and event streams hold across
// them, turns of one session never interleave, and a replica killed with SIGKILL loses
// no turn it acknowledged. An MCP call's question, open in the replica that made the
// call, is answered through any replica, and withdrawn honestly when that replica died.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "net/http_client.h"
#include "net/sse.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/session_events.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

using testing::Call;
using testing::Reply;
using testing::ServerProcess;

std::string Say(const std::string& text, const std::string& speaker = "user") {
  return Json{{"speaker", speaker}, {"say", text}}.dump();
}

class ReplicasE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = testing::TestPostgres::Shared().NewDatabase();
    store_ = testing::TestPostgres::Shared().Url(db_);
    for (int i = 0; i < 3; ++i) replicas_.push_back(Start());
  }
  virtual std::string Config() const { return "tests/server/agent.yaml"; }
  std::unique_ptr<ServerProcess> Start() {
    auto s = std::make_unique<ServerProcess>(std::vector<std::string>{
        "--config", Config(), "--store", store_, "--heartbeat-ms", "200"});
    EXPECT_GT(s->port(), 0) << "the replica did not start: " << s->first_line() << s->Log();
    return s;
  }
  const ServerProcess& replica(size_t i) const { return *replicas_[i % replicas_.size()]; }
  static std::string NewSession(const ServerProcess& on) {
    Reply r = Call("POST", on.base_url() + "/v1/sessions", "{}");
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("session_id", "");
  }
  static std::string Turns(const ServerProcess& on, const std::string& session) {
    return on.base_url() + "/v1/sessions/" + session + "/turns";
  }
  static Reply Turn(const ServerProcess& on, const std::string& session, const std::string& text) {
    return Call("POST", Turns(on, session), Say(text));
  }
  // Sends every request at once, each to its replica; the answers in the same order.
  std::vector<HttpResponse> AllAtOnce(const std::vector<HttpRequest>& requests) {
    boost::asio::io_context io;
    HttpClient client;
    std::vector<HttpResponse> answers(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      boost::asio::co_spawn(io, [&, i]() -> Task<void> {
        Result<HttpResponse> r = co_await client.Send(requests[i]);
        if (r.ok()) answers[i] = std::move(r).value();
      }, boost::asio::detached);
    }
    io.run_for(std::chrono::seconds(60));
    return answers;
  }

  // Waits (up to a minute: a margin for a busy machine) until no turn holds a session. A
  // turn lets go of its session just after its reply; a replica killed before that
  // leaves the claim to lapse after the turn timeout, a limit docs/deployment.md states,
  // which the tests that kill a replica right after a reply are not about.
  void AwaitClaimsReleased() const {
    for (int waited = 0; waited < 60000; waited += 20) {
      if (testing::TestPostgres::Shared().Query(db_, "SELECT COUNT(*) FROM sessions WHERE claim_owner IS NOT NULL") == "0") {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Waits (up to a minute) until every replica's event relay listens: the relays replay
  // nothing, so an event sent before a replica listens never reaches its streams. A
  // relay's connection runs LISTEN first and then only relays (pg_event_relay.cc), so its
  // last statement, once done, says it listens.
  bool AwaitRelaysListening() const {
    const std::string listening =
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND ((query LIKE 'LISTEN%' AND state = 'idle') OR query LIKE 'SELECT pg_notify%')";
    for (int waited = 0; waited < 60000; waited += 20) {
      if (std::stoul(testing::TestPostgres::Shared().Query(db_, listening)) >= replicas_.size()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::string db_;
  std::string store_;
  std::vector<std::unique_ptr<ServerProcess>> replicas_;
};

TEST_F(ReplicasE2eTest, AnyReplicaTakesAnyRequestOfAnySession) {
  const std::string id = NewSession(replica(0));
  Reply prayed = Turn(replica(1), id, "Please pray for my mother");  // a deferred write, awaited
  ASSERT_EQ(prayed.status, 200) << prayed.body.dump();
  EXPECT_EQ(prayed.body["tools"][0]["success"], true) << prayed.body.dump();
  Reply hello = Turn(replica(2), id, "hello");
  ASSERT_EQ(hello.status, 200) << hello.body.dump();
  Reply session = Call("GET", replica(0).base_url() + "/v1/sessions/" + id);
  ASSERT_EQ(session.status, 200);
  EXPECT_EQ(session.body["turns"], 2);
  Reply trace = Call("GET", replica(1).base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.status, 200);
  ASSERT_EQ(trace.body["turns"].size(), 2u);
  EXPECT_EQ(Call("GET", replica(2).base_url() + "/v1/sessions/s_nope").status, 404);

  // A session begun by its first turn (on a shared store, stored before the turn) goes
  // on through another replica.
  Reply begun = Call("POST", replica(2).base_url() + "/v1/sessions", R"({"turn":{"say":"hello"}})");
  ASSERT_EQ(begun.status, 201) << begun.body.dump();
  EXPECT_EQ(begun.body["turn"]["status"], "completed");
  const std::string started = begun.body["session_id"];
  ASSERT_EQ(Turn(replica(0), started, "hello").status, 200);
  EXPECT_EQ(Call("GET", replica(1).base_url() + "/v1/sessions/" + started).body["turns"], 2);
}

// A notice recorded for a session elsewhere (another replica's background write that
// failed, written here as that replica's store call would) reaches the session's next
// turn on a replica whose cached copy knew of none: its claim says one waits. Once
// delivered, the turn after it carries none.
TEST_F(ReplicasE2eTest, ANoticeAnotherReplicaRecordedReachesTheNextTurnOnAnyReplica) {
  const std::string id = NewSession(replica(0));
  ASSERT_EQ(Turn(replica(1), id, "hello").status, 200);
  ASSERT_EQ(Turn(replica(1), id, "hello").status, 200);  // replica 1 has the session, and knows of no notice
  AwaitClaimsReleased();
  testing::TestPostgres::Shared().Query(
      db_, "INSERT INTO notices (session_id, turn_id, text, created_at) VALUES ('" + id +
               "', 't_elsewhere', '(Note: I could not save your note.)', 1)");
  Reply told = Turn(replica(1), id, "hello");
  ASSERT_EQ(told.status, 200) << told.body.dump();
  EXPECT_NE(told.body.value("reply", "").find("could not save your note"), std::string::npos) << told.body.dump();
  Reply next = Turn(replica(1), id, "hello");
  ASSERT_EQ(next.status, 200);
  EXPECT_EQ(next.body.value("reply", "").find("could not save your note"), std::string::npos) << "delivered once";
}

TEST_F(ReplicasE2eTest, AReplicaKilledWithSigkillLosesNoAcknowledgedTurn) {
  std::vector<std::string> answered;
  for (int i = 0; i < 8; ++i) {
    const ServerProcess& on = replica(i % 2);
    const std::string id = NewSession(on);
    Reply turn = Turn(on, id, "Please pray for my mother");
    ASSERT_EQ(turn.status, 200) << turn.body.dump();
    answered.push_back(id);
  }
  AwaitClaimsReleased();
  replicas_[0]->Signal(SIGKILL);
  replicas_[0]->Wait();
  for (const std::string& id : answered) {
    Reply session = Call("GET", replica(1).base_url() + "/v1/sessions/" + id);
    ASSERT_EQ(session.status, 200) << id;
    EXPECT_EQ(session.body["turns"], 1) << id;
    Reply next = Turn(replica(2), id, "hello");  // the sessions A served go on through B
    EXPECT_EQ(next.status, 200) << next.body.dump();
    EXPECT_EQ(Call("GET", replica(1).base_url() + "/v1/sessions/" + id).body["turns"], 2) << id;
  }
}

TEST_F(ReplicasE2eTest, TheFloorHoldsAcrossReplicas) {
  const std::string id = NewSession(replica(0));
  Reply asked = Call("POST", Turns(replica(0), id), Say("Tell John I'm late", "ana"));
  ASSERT_EQ(asked.status, 200) << asked.body.dump();
  ASSERT_EQ(asked.body["status"], "awaiting_clarification") << asked.body.dump();
  EXPECT_EQ(asked.body["lease"]["owner"], "ana");
  // Ben, through another replica, is kept off the floor Ana holds.
  Reply ben = Call("POST", Turns(replica(1), id), Say("hi", "ben"));
  ASSERT_EQ(ben.status, 200) << ben.body.dump();
  EXPECT_EQ(ben.body["status"], "blocked") << ben.body.dump();
  // Ana's answer, through the third replica, is admitted and answers her question
  // (the scripted model then looks John up again: a new question, not the old one).
  Reply answered = Call("POST", Turns(replica(2), id), R"({"speaker":"ana","select":"u_doe"})");
  ASSERT_EQ(answered.status, 200) << answered.body.dump();
  EXPECT_NE(answered.body["status"], "blocked") << answered.body.dump();
  Reply trace = Call("GET", replica(1).base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.body["turns"].size(), 3u) << trace.body.dump();
  bool answered_event = false;
  for (const Json& e : trace.body["turns"][2]["events"]) {
    answered_event = answered_event || (e["type"] == "clarification.answered" &&
                                        e["data"]["id"] == asked.body["clarification"]["id"]);
  }
  EXPECT_TRUE(answered_event) << trace.body["turns"][2].dump();
}

TEST_F(ReplicasE2eTest, AnApprovalAskedOnOneReplicaIsGrantedOnAnother) {
  const std::string id = NewSession(replica(0));
  Reply paused = Turn(replica(0), id, "show it");
  ASSERT_EQ(paused.status, 200) << paused.body.dump();
  ASSERT_EQ(paused.body["status"], "awaiting_approval") << paused.body.dump();
  EXPECT_TRUE(Call("GET", replica(2).base_url() + "/v1/sessions/" + id).body.contains("pending_approval"));
  Reply approved = Call("POST", Turns(replica(1), id), R"({"speaker":"user","approve":true})");
  ASSERT_EQ(approved.status, 200) << approved.body.dump();
  EXPECT_EQ(approved.body["status"], "completed") << approved.body.dump();
  EXPECT_EQ(approved.body["tools"][0]["status"], "executed") << approved.body.dump();
}

TEST_F(ReplicasE2eTest, FiftyConcurrentTurnsOfOneSessionAreEachRecordedOnceInOrder) {
  const std::string id = NewSession(replica(0));
  std::vector<HttpRequest> requests(50);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].url = Turns(replica(i), id);
    requests[i].body = Say("hello number " + std::to_string(i));
  }
  std::set<std::string> answered;
  for (const HttpResponse& answer : AllAtOnce(requests)) {
    ASSERT_EQ(answer.status, 200) << answer.body;
    answered.insert(Json::parse(answer.body).value("turn_id", ""));
  }
  Reply trace = Call("GET", replica(1).base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.body["turns"].size(), 50u);
  std::set<std::string> said, stored;
  for (size_t i = 0; i < 50; ++i) {
    const Json& turn = trace.body["turns"][i];
    EXPECT_EQ(turn["turn_number"], static_cast<int>(i) + 1) << "a gap or a duplicate at " << i;
    said.insert(turn["input"].value("say", ""));
    stored.insert(turn.value("turn_id", ""));
  }
  EXPECT_EQ(said.size(), 50u) << "every request is one turn";
  EXPECT_EQ(stored, answered) << "every answer is a stored turn of its own";
}

TEST_F(ReplicasE2eTest, ARetrySentToAnotherReplicaRunsNothingTwice) {
  const std::string id = NewSession(replica(0));
  const std::string body = Json{{"speaker", "user"}, {"say", "Please pray for my mother"}, {"idempotency_key", "req-1"}}.dump();
  std::vector<HttpRequest> requests(3);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].url = Turns(replica(i), id);
    requests[i].body = body;
  }
  std::vector<HttpResponse> answers = AllAtOnce(requests);
  std::set<std::string> turn_ids;
  int replays = 0;
  for (const HttpResponse& answer : answers) {
    ASSERT_EQ(answer.status, 200) << answer.body;
    turn_ids.insert(Json::parse(answer.body).value("turn_id", ""));
    replays += answer.Header("idempotent-replay") == "true";
  }
  EXPECT_EQ(turn_ids.size(), 1u);
  EXPECT_EQ(replays, 2);
  Reply trace = Call("GET", replica(2).base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.body["turns"].size(), 1u);
  int writes = 0;
  for (const Json& e : trace.body["turns"][0]["events"]) writes += e["type"] == "deferred.executed";
  EXPECT_EQ(writes, 1);
}

// The OpenAI-compatible door behind a load balancer: a stateless client resends its
// history to whichever replica, and the history finds its session on every one of them.
TEST_F(ReplicasE2eTest, AStatelessChatClientHopsReplicasWithinOneSession) {
  const auto chat = [&](size_t on, const Json& messages) {
    return Call("POST", replica(on).base_url() + "/v1/chat/completions",
                Json{{"model", "serve-test"}, {"messages", messages}}.dump());
  };
  Json messages = Json::array({{{"role", "user"}, {"content", "hi across replicas"}}});
  Reply first = chat(0, messages);
  ASSERT_EQ(first.status, 200) << first.body.dump();
  const std::string session = first.body["reins"]["session_id"];
  messages.push_back({{"role", "assistant"}, {"content", first.body["choices"][0]["message"]["content"]}});
  messages.push_back({{"role", "user"}, {"content", "Please pray for my mother"}});
  Reply second = chat(1, messages);
  ASSERT_EQ(second.status, 200) << second.body.dump();
  EXPECT_EQ(second.body["reins"]["session_id"], session);
  Reply resent = chat(2, messages);  // the same request to a third replica: the stored answer
  ASSERT_EQ(resent.status, 200) << resent.body.dump();
  EXPECT_EQ(resent.body["id"], second.body["id"]);
  EXPECT_EQ(resent.raw.Header("idempotent-replay"), "true");
  Reply trace = Call("GET", replica(0).base_url() + "/v1/sessions/" + session + "/trace");
  EXPECT_EQ(trace.body["turns"].size(), 2u);
}

TEST_F(ReplicasE2eTest, AnEventStreamSeesTheTurnsOfOtherReplicas) {
  const std::string id = NewSession(replica(0));
  ASSERT_TRUE(AwaitRelaysListening()) << "the replicas' event relays never listened";
  boost::asio::io_context io;
  HttpClient client;
  std::vector<SseEvent> events;
  auto talk = [&]() -> Task<void> {
    HttpRequest r;
    r.url = Turns(replica(1), id);
    r.body = Say("Please pray for my mother");
    (void)co_await client.Send(r);
  };
  // The last thing the turn does is its deferred call's end.
  auto listen = [&]() -> Task<void> {
    co_await testing::ReadSessionEvents(client, replica(0).base_url() + "/v1/sessions/" + id + "/events", "deferred.finished", events,
                                        [&] { boost::asio::co_spawn(io, talk(), boost::asio::detached); });
  };
  boost::asio::co_spawn(io, listen(), boost::asio::detached);
  io.run_for(std::chrono::seconds(60));  // returns once both are done
  std::vector<std::string> names;
  for (const SseEvent& e : events) {
    if (e.event != "heartbeat") names.push_back(e.event);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "turn.completed"), names.end()) << ::testing::PrintToString(names);
  EXPECT_NE(std::find(names.begin(), names.end(), "deferred.finished"), names.end()) << ::testing::PrintToString(names);
}

// The agent of mcp_agent.yaml: a tool whose MCP server asks "Which color?" mid-call.
class McpReplicasE2eTest : public ReplicasE2eTest {
 protected:
  // Every replica's MCP server logs what it hears here (the client's answers too).
  void SetUp() override {
    setenv("FAKE_LOG", log_.c_str(), 1);
    ReplicasE2eTest::SetUp();
  }
  void TearDown() override {
    unsetenv("FAKE_LOG");
    unlink(log_.c_str());
  }
  std::string Config() const override { return "tests/server/mcp_agent.yaml"; }
  // Waits (up to `wait_ms`: a minute by default, a margin for a busy machine) until some
  // MCP server heard `text`.
  bool ServerHeard(const std::string& text, int wait_ms = 60000) const {
    for (int waited = 0; waited <= wait_ms; waited += 50) {
      std::ifstream in(log_);
      std::stringstream heard;
      heard << in.rdbuf();
      if (heard.str().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // Asks through replica 0: the call stays open there, on its own MCP server.
  // `quickly`: with pick_color_quickly, whose 2000 ms the relay's wait for the holder
  // shortens to fit (the other tool leaves an answer through other replicas a margin).
  std::string Ask(bool quickly = false) {
    const std::string id = NewSession(replica(0));
    Reply asked = Turn(replica(0), id, quickly ? "Pick a colour for the banner, quickly" : "Pick a colour for the banner");
    EXPECT_EQ(asked.status, 200) << asked.body.dump();
    EXPECT_EQ(asked.body["status"], "awaiting_clarification") << asked.body.dump();
    return id;
  }
  static std::string ToolResult(const ServerProcess& on, const std::string& id, size_t turn) {
    Reply trace = Call("GET", on.base_url() + "/v1/sessions/" + id + "/trace");
    if (trace.body["turns"].size() <= turn) return "no turn " + std::to_string(turn) + ": " + trace.body.dump();
    for (const Json& e : trace.body["turns"][turn]["events"]) {
      if (e["type"] == "tool.executed") return e["data"]["result"].dump();
    }
    return "no tool.executed in " + trace.body["turns"][turn].dump();
  }
  // Asks through `asker`, answers `color` through `answerer`; the call (turn number
  // `turn`, 0-based) finished with that colour.
  static void AskAndAnswer(const std::string& id, const ServerProcess& asker, const ServerProcess& answerer,
                           const std::string& color, size_t turn) {
    Reply asked = Turn(asker, id, "Pick a colour, please");
    ASSERT_EQ(asked.body["status"], "awaiting_clarification") << asked.body.dump();
    Reply answered = Call("POST", Turns(answerer, id), Json{{"speaker", "user"}, {"select", color}}.dump());
    EXPECT_EQ(answered.body["status"], "completed") << answered.body.dump();
    const std::string result = ToolResult(asker, id, turn);
    EXPECT_NE(result.find(R"("color":")" + color + R"(")"), std::string::npos) << result;
  }
  const std::string log_ = "/tmp/reins-fake-mcp-" + std::to_string(getpid()) + ".log";
};

TEST_F(McpReplicasE2eTest, AnMcpQuestionAskedOnOneReplicaIsAnsweredThroughAnother) {
  const std::string id = Ask();
  Reply answered = Call("POST", Turns(replica(1), id), R"({"speaker":"user","select":"blue"})");
  ASSERT_EQ(answered.status, 200) << answered.body.dump();
  EXPECT_EQ(answered.body["status"], "completed") << answered.body.dump();
  EXPECT_EQ(answered.body["reply"], "Done.") << answered.body.dump();
  // The call open on replica 0 got the choice and finished with it.
  const std::string result = ToolResult(replica(2), id, 1);
  EXPECT_NE(result.find(R"("color":"blue")"), std::string::npos) << result;
  EXPECT_NE(result.find(R"("action":"accept")"), std::string::npos) << result;
  // The session moves on: a new question, asked and answered through other replicas.
  AskAndAnswer(id, replica(2), replica(0), "red", 3);
  // A replica whose relay holds and serves questions stops cleanly (under the
  // sanitizers, too: a report would make the exit code non-zero).
  Reply third = Turn(replica(1), id, "One more colour");
  ASSERT_EQ(third.body["status"], "awaiting_clarification") << third.body.dump();
  for (auto& r : replicas_) r->Signal(SIGTERM);
  for (auto& r : replicas_) EXPECT_EQ(r->Wait(15000), 0) << r->Log();
}

TEST_F(McpReplicasE2eTest, AQuestionSupersededThroughAnotherReplicaIsLetGoWhereItWasAsked) {
  const std::string id = Ask();  // open on replica 0
  EXPECT_FALSE(ServerHeard(R"("action":"cancel")", 0));
  // Asked again through replica 1: its own call asks; replica 0's call is cancelled.
  Reply again = Turn(replica(1), id, "Start over and pick a colour");
  ASSERT_EQ(again.body["status"], "awaiting_clarification") << again.body.dump();
  EXPECT_TRUE(ServerHeard(R"("action":"cancel")")) << "replica 0's server never heard its question withdrawn";
  // The answer, through replica 2, reaches the new call (on replica 1).
  Reply red = Call("POST", Turns(replica(2), id), R"({"speaker":"user","select":"red"})");
  EXPECT_EQ(red.body["status"], "completed") << red.body.dump();
  const std::string result = ToolResult(replica(0), id, 2);
  EXPECT_NE(result.find(R"("color":"red")"), std::string::npos) << result;
}

TEST_F(McpReplicasE2eTest, AnAnswerAStalledHolderDidNotTakeIsWithdrawnAndTheHolderLetsGo) {
  const std::string id = Ask(/*quickly=*/true);  // open on replica 0
  AwaitClaimsReleased();
  // Replica 0 stalls (SIGSTOP): alive, but it does not read its mail.
  replicas_[0]->Signal(SIGSTOP);
  Reply answered = Call("POST", Turns(replica(1), id), R"({"speaker":"user","select":"blue"})");
  ASSERT_EQ(answered.status, 200) << answered.body.dump();
  const std::string result = ToolResult(replica(2), id, 1);
  EXPECT_NE(result.find("the question was withdrawn"), std::string::npos) << result;
  EXPECT_NE(result.find("within 1500 ms"), std::string::npos) << "the wait fits the call's 2000 ms: " << result;
  // Back, replica 0 finds its question withdrawn: the server hears `cancel`, never
  // the choice the person's turn gave up on.
  replicas_[0]->Signal(SIGCONT);
  EXPECT_TRUE(ServerHeard(R"("action":"cancel")")) << "the stalled holder never let its call go";
  EXPECT_FALSE(ServerHeard(R"("action":"accept")", 0)) << "an answer its turn gave up on reached the server";
}

TEST_F(McpReplicasE2eTest, AQuestionWhoseReplicaDiedIsWithdrawnWithAnHonestMessage) {
  const std::string id = Ask(/*quickly=*/true);
  AwaitClaimsReleased();
  replicas_[0]->Signal(SIGKILL);
  replicas_[0]->Wait();
  const auto start = std::chrono::steady_clock::now();
  Reply answered = Call("POST", Turns(replica(1), id), R"({"speaker":"user","select":"blue"})");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(answered.status, 200) << answered.body.dump();
  EXPECT_EQ(answered.body["status"], "completed") << answered.body.dump();
  EXPECT_LT(took, std::chrono::seconds(8)) << "withdrawn after the relay's wait";
  const std::string result = ToolResult(replica(2), id, 1);
  EXPECT_NE(result.find("the question was withdrawn"), std::string::npos) << result;
  EXPECT_NE(result.find("ask again"), std::string::npos) << result;
  // Asked again, the question is held by a live replica and answered as usual.
  AskAndAnswer(id, replica(2), replica(1), "blue", 3);
}

}  // namespace
}  // namespace reins

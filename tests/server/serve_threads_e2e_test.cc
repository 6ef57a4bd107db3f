// `reins serve --threads 4` end to end: four event loops (EventLoops), each connection
// on one, each turn on its connection's loop, different sessions in parallel. Whatever
// loop a turn lands on, a session's turns run one at a time, in the order they were
// stored, each write runs once, and nothing a turn writes is lost. `make
// test-tsan` runs this against a reins built with ThreadSanitizer; its reports go to
// the server's log, which must have none.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "reins/json.h"
#include "server/api_client.h"
#include "server/server_process.h"

namespace reins {
namespace {

using testing::Call;
using testing::Reply;
using testing::ServerProcess;

constexpr int kThreads = 4;

std::string Say(int n) { return Json{{"speaker", "user"}, {"say", "Please pray, turn " + std::to_string(n)}}.dump(); }

// The stored turns of session `id`: numbered 1..`count`, each begun after the one before
// it completed, each with its one deferred write run once. `texts` (when given) are the
// turns' words in the order they were sent.
void ExpectOneAtATime(const ServerProcess& server, const std::string& id, size_t count,
                      const std::vector<std::string>& texts = {}) {
  Reply trace = Call("GET", server.base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.status, 200) << trace.body.dump();
  const Json& turns = trace.body["turns"];
  ASSERT_EQ(turns.size(), count) << id;
  int64_t last_completed = 0;
  for (size_t i = 0; i < turns.size(); ++i) {
    EXPECT_EQ(turns[i]["turn_number"], i + 1) << id;
    if (!texts.empty()) {
      EXPECT_EQ(turns[i]["input"].value("say", ""), texts[i]) << id;
    }
    int64_t started = -1, completed = -1;
    int writes = 0;
    for (const Json& e : turns[i]["events"]) {
      const std::string type = e.value("type", "");
      if (type == "turn.started") started = e.value("at_ms", int64_t{-1});
      if (type == "turn.completed") completed = e.value("at_ms", int64_t{-1});
      writes += type == "deferred.executed";
    }
    EXPECT_GE(started, last_completed) << id << " turn " << i + 1 << " began before the turn before it ended";
    EXPECT_GE(completed, started) << id;
    EXPECT_EQ(writes, 1) << id << " turn " << i + 1;
    last_completed = completed;
  }
}

class ServeThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(std::vector<std::string>{
        "--config", "tests/server/agent.yaml", "--threads", std::to_string(kThreads), "--rate", "100000", "--burst", "100000"});
    ASSERT_GT(server_->port(), 0) << "the server did not start: " << server_->first_line() << server_->Log();
  }
  void TearDown() override {
    if (!server_ || server_->port() <= 0) return;
    server_->Signal(SIGTERM);
    EXPECT_EQ(server_->Wait(60000), 0) << server_->Log();
    EXPECT_EQ(server_->Log().find("ThreadSanitizer"), std::string::npos) << server_->Log();
  }
  std::string url(const std::string& path) const { return server_->base_url() + path; }
  std::unique_ptr<ServerProcess> server_;
};

// 24 sessions, begun by their first turn and then each given five more one after
// another, from eight client threads at once (new connections each: the loops in turn).
TEST_F(ServeThreadsTest, ManySessionsInParallelKeepEachSessionsOrder) {
  constexpr int kSessions = 24, kTurns = 6, kClients = 8;
  std::vector<std::string> ids(kSessions);
  std::atomic<int> next{0}, failures{0};
  auto client = [&] {
    for (int s = next++; s < kSessions; s = next++) {
      Reply begun = Call("POST", url("/v1/sessions"), Json{{"turn", Json::parse(Say(1))}}.dump());
      if (begun.status != 201 || begun.body["turn"]["status"] != "completed") {
        ADD_FAILURE() << begun.status << " " << begun.body.dump();
        ++failures;
        continue;
      }
      ids[s] = begun.body.value("session_id", "");
      for (int n = 2; n <= kTurns; ++n) {
        Reply r = Call("POST", url("/v1/sessions/" + ids[s] + "/turns"), Say(n));
        if (r.status != 200 || r.body["status"] != "completed") {
          ADD_FAILURE() << ids[s] << " turn " << n << ": " << r.status << " " << r.body.dump();
          ++failures;
        }
      }
    }
  };
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) clients.emplace_back(client);
  for (std::thread& t : clients) t.join();
  ASSERT_EQ(failures, 0);
  std::vector<std::string> texts;
  for (int n = 1; n <= kTurns; ++n) texts.push_back("Please pray, turn " + std::to_string(n));
  for (const std::string& id : ids) ExpectOneAtATime(*server_, id, kTurns, texts);
}

// Three turns of one session sent at once, on three connections (so, with four loops,
// on up to three threads): they run one at a time, and none is lost or refused.
TEST_F(ServeThreadsTest, TurnsOfOneSessionSentAtOnceRunOneAtATime) {
  constexpr int kSessions = 8, kAtOnce = 3;
  std::vector<std::string> ids;
  for (int s = 0; s < kSessions; ++s) {
    Reply created = Call("POST", url("/v1/sessions"), "{}");
    ASSERT_EQ(created.status, 201) << created.body.dump();
    ids.push_back(created.body.value("session_id", ""));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> senders;
  for (const std::string& id : ids) {
    for (int n = 1; n <= kAtOnce; ++n) {
      senders.emplace_back([&, id, n] {
        Reply r = Call("POST", url("/v1/sessions/" + id + "/turns"), Say(n));
        if (r.status != 200 || r.body["status"] != "completed") {
          ADD_FAILURE() << id << ": " << r.status << " " << r.body.dump();
          ++failures;
        }
      });
    }
  }
  for (std::thread& t : senders) t.join();
  ASSERT_EQ(failures, 0);
  for (const std::string& id : ids) ExpectOneAtATime(*server_, id, kAtOnce);
}

}  // namespace
}  // namespace reins

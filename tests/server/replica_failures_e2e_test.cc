// Replicas on one PostgreSQL database when things fail: a replica killed while its
// deferred write is at the backend, the database restarted under load, and a database
// that stalls (the server goes on answering what does not need it). Real
// `reins serve` processes, a real PostgreSQL server, a real HTTP tool endpoint.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <libpq-fe.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "net/http_client.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/mock_upstream.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

using testing::Call;
using testing::MockUpstream;
using testing::Reply;
using testing::ServerProcess;

std::string Say(const std::string& text) { return Json{{"speaker", "user"}, {"say", text}}.dump(); }

std::unique_ptr<ServerProcess> StartReplica(const std::string& config, const std::string& store) {
  auto s = std::make_unique<ServerProcess>(
      std::vector<std::string>{"--config", config, "--store", store, "--rate", "1000000", "--burst", "1000000"});
  EXPECT_GT(s->port(), 0) << "the replica did not start: " << s->first_line() << s->Log();
  return s;
}

std::string NewSession(const ServerProcess& on) {
  Reply r = Call("POST", on.base_url() + "/v1/sessions", "{}");
  EXPECT_EQ(r.status, 201) << r.body.dump();
  return r.body.value("session_id", "");
}

// Polls `done` every 50 ms for up to `seconds`.
bool Eventually(const std::function<bool()>& done, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// An agent whose one deferred tool posts to `journal`, with a short await budget (by
// default) so the turn answers while its write is still at the backend.
std::string JournalAgent(const MockUpstream& journal, int await_ms = 300) {
  const std::string path = ::testing::TempDir() + "journal_agent_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << R"yaml(name: journal
system_prompt: You keep prayer requests.
model:
  provider: scripted
  replies:
    - { when: { last: user }, repeat: true, tool_calls: [ { name: save_prayer, args: { request: for my mother } } ] }
    - { when: { last: tool }, repeat: true, text: The team will pray for her. }
deferred: { mode: await, timeout_ms: )yaml" << await_ms << R"yaml( }
tools:
  - name: save_prayer
    timing: deferred
    timeout_ms: 60000
    input_schema: { type: object, properties: { request: { type: string } }, required: [request] }
    backend: { http: { url: ")yaml" << journal.base_url() << R"yaml(/prayers", timeout_ms: 60000 } }
)yaml";
  return path;
}

TEST(ReplicaFailuresE2eTest, AWriteWhoseReplicaWasKilledTakesEffectOnceUnderItsOneKey) {
  MockUpstream journal;
  testing::MockReply held = MockUpstream::Json(200, R"({"success":true,"data":{"id":"pr_1"}})");
  held.first_byte_delay_ms = 60000;  // the first delivery never returns: its replica dies first
  journal.Enqueue(held);
  journal.Enqueue(MockUpstream::Json(200, R"({"success":true,"data":{"id":"pr_1"}})"));
  const std::string config = JournalAgent(journal);
  testing::TestPostgres& pg = testing::TestPostgres::Shared();
  const std::string store = pg.Url(pg.NewDatabase(), "outbox_lapse_ms=1500");
  std::unique_ptr<ServerProcess> a = StartReplica(config, store);
  std::unique_ptr<ServerProcess> b = StartReplica(config, store);

  const std::string id = NewSession(*a);
  Reply turn = Call("POST", a->base_url() + "/v1/sessions/" + id + "/turns", Say("Please pray for my mother"));
  ASSERT_EQ(turn.status, 200) << turn.body.dump();
  ASSERT_TRUE(Eventually([&] { return journal.requests().size() == 1; }, 60)) << "the write never reached the journal";
  a->Signal(SIGKILL);
  a->Wait();

  // Past the takeover lapse, a replica that starts finds the write still `running`
  // and delivers it again.
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  std::unique_ptr<ServerProcess> c = StartReplica(config, store);
  ASSERT_TRUE(Eventually([&] { return journal.requests().size() == 2; }, 60)) << c->Log();

  std::set<std::string> keys;
  for (const testing::RecordedRequest& r : journal.requests()) keys.insert(r.headers.count("idempotency-key") ? r.headers.at("idempotency-key") : "");
  ASSERT_EQ(keys.size(), 1u) << "the repeated delivery must carry the first one's key";
  EXPECT_FALSE(keys.begin()->empty());

  int executed = 0;
  ASSERT_TRUE(Eventually([&] {
    Reply trace = Call("GET", b->base_url() + "/v1/sessions/" + id + "/trace");
    executed = 0;
    for (const Json& e : trace.body["turns"][0]["events"]) executed += e["type"] == "deferred.executed";
    return executed > 0;
  }, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Reply trace = Call("GET", b->base_url() + "/v1/sessions/" + id + "/trace");
  executed = 0;
  for (const Json& e : trace.body["turns"][0]["events"]) executed += e["type"] == "deferred.executed";
  EXPECT_EQ(executed, 1) << "the outcome is recorded once";
  EXPECT_EQ(journal.requests().size(), 2u);
}

// Second probe, finding 3: writes whose outcome came back while the database was down
// were left `running`, and delivered a second time once the outbox lapse passed; the
// sessions' claims, whose release failed too, held every other replica's turn for
// their whole lapse. Now the outcome and the release are tried until they land.
TEST(ReplicaFailuresE2eTest, WritesThatFinishWhileTheDatabaseIsDownAreDeliveredOnceAndTheirSessionsFreed) {
  MockUpstream journal;
  constexpr int kSessions = 4;
  for (int i = 0; i < 2 * kSessions; ++i) {
    testing::MockReply slow = MockUpstream::Json(200, R"({"success":true,"data":{"id":"pr"}})");
    slow.first_byte_delay_ms = 1500;  // each delivery returns while the database is down
    journal.Enqueue(slow);
  }
  // The turns wait for their writes: each turn's end (its claim's release) comes while
  // the database is down too.
  const std::string config = JournalAgent(journal, 5000);
  std::unique_ptr<testing::TestPostgres> pg = testing::TestPostgres::StartOwn();
  const std::string db = pg->NewDatabase();
  const std::string store = pg->Url(db, "outbox_lapse_ms=1500");
  std::unique_ptr<ServerProcess> a = StartReplica(config, store);
  std::vector<std::string> sessions;
  for (int i = 0; i < kSessions; ++i) sessions.push_back(NewSession(*a));
  std::vector<std::thread> turns;
  for (const std::string& id : sessions) {
    turns.emplace_back([&a, id] { Call("POST", a->base_url() + "/v1/sessions/" + id + "/turns", Say("Please pray for my mother")); });
  }
  ASSERT_TRUE(Eventually([&] { return journal.requests().size() == kSessions; }, 60)) << a->Log();
  auto key_of = [](const testing::RecordedRequest& r) {
    return r.headers.count("idempotency-key") ? r.headers.at("idempotency-key") : "";
  };
  std::map<std::string, int> deliveries;  // of the writes in flight when the database stopped
  for (const testing::RecordedRequest& r : journal.requests()) deliveries[key_of(r)] = 0;
  pg->Stop("immediate");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // every delivery has returned
  for (std::thread& t : turns) t.join();
  pg->StartAgain();
  // Past the lapse already (the writes were claimed before the database stopped): wait
  // for A to land the outcomes and the releases it retries with back-off, however long
  // a busy machine makes that, rather than for a guess at it.
  EXPECT_TRUE(Eventually([&] {
    return pg->Query(db, "SELECT COUNT(*) FROM outbox WHERE status <> 'done'") == "0" &&
           pg->Query(db, "SELECT COUNT(*) FROM sessions WHERE claim_owner IS NOT NULL") == "0";
  }, 60)) << "A never recorded the outcomes or let the sessions go: " << a->Log();

  // A replica that starts now runs whatever the outbox still has unfinished.
  std::unique_ptr<ServerProcess> b = StartReplica(config, store);
  for (const std::string& id : sessions) {
    HttpClient client;
    HttpRequest next;
    next.url = b->base_url() + "/v1/sessions/" + id + "/turns";
    next.body = Say("hello");
    next.timeouts.total_ms = next.timeouts.first_byte_ms = 10000;
    boost::asio::io_context io;
    int status = 0;
    boost::asio::co_spawn(io, [&]() -> Task<void> {
      Result<HttpResponse> answer = co_await client.Send(next);
      status = answer.ok() ? answer->status : 0;
    }, boost::asio::detached);
    io.run();
    EXPECT_EQ(status, 200) << id << ": the session's claim was left held\n" << a->Log();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  ASSERT_EQ(deliveries.size(), static_cast<size_t>(kSessions));
  for (const testing::RecordedRequest& r : journal.requests()) {
    if (deliveries.count(key_of(r))) ++deliveries[key_of(r)];
  }
  for (const auto& [key, n] : deliveries) EXPECT_EQ(n, 1) << "write " << key << " was delivered " << n << " times";
}

TEST(ReplicaFailuresE2eTest, ADatabaseRestartUnderLoadFailsTurnsCleanlyAndHalfWritesNothing) {
  std::unique_ptr<testing::TestPostgres> pg = testing::TestPostgres::StartOwn();
  const std::string store = pg->Url(pg->NewDatabase());
  std::vector<std::unique_ptr<ServerProcess>> replicas;
  for (int i = 0; i < 3; ++i) replicas.push_back(StartReplica("tests/server/agent.yaml", store));
  constexpr int kSessions = 12;
  std::vector<std::string> sessions;
  for (int i = 0; i < kSessions; ++i) sessions.push_back(NewSession(*replicas[i % 3]));

  // One client per session, each turn to the next replica, for 4 s; the database
  // restarts after 1 s.
  std::map<int, int> statuses;
  std::vector<std::string> bodies;  // of answers that are neither 200 nor 503
  std::vector<int> acknowledged(kSessions, 0);
  std::vector<int> refused(kSessions, 0);
  std::atomic<bool> stop = false;
  std::thread restart([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    pg->Restart();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    stop = true;
  });
  boost::asio::io_context io;
  HttpClient client;
  for (int s = 0; s < kSessions; ++s) {
    boost::asio::co_spawn(io, [&, s]() -> Task<void> {
      for (int k = 0; !stop; ++k) {
        HttpRequest r;
        r.url = replicas[(s + k) % 3]->base_url() + "/v1/sessions/" + sessions[s] + "/turns";
        r.body = Say("hello");
        r.timeouts.total_ms = r.timeouts.first_byte_ms = 30000;
        Result<HttpResponse> answer = co_await client.Send(r);
        const int status = answer.ok() ? answer->status : 0;
        ++statuses[status];
        if (status != 200 && status != 503 && answer.ok()) bodies.push_back(answer->body);
        (status == 200 ? acknowledged : refused)[s]++;
      }
    }, boost::asio::detached);
  }
  io.run();
  restart.join();

  for (const auto& [status, count] : statuses) {
    EXPECT_TRUE(status == 200 || status == 503) << count << " turns answered " << status;
  }
  for (const std::string& body : bodies) ADD_FAILURE() << body;
  std::cout << "answers: " << ::testing::PrintToString(statuses) << "\n";
  EXPECT_GT(statuses[200], kSessions) << "turns ran before and after the restart";
  EXPECT_GT(statuses[503], 0) << "the restart hit turns in flight";
  for (const auto& replica : replicas) {
    EXPECT_TRUE(Eventually([&] { return Call("GET", replica->base_url() + "/readyz").status == 200; }, 60));
  }
  for (int s = 0; s < kSessions; ++s) {
    // Every session takes turns again at once, on any replica: no claim was left held.
    Reply next = Call("POST", replicas[s % 3]->base_url() + "/v1/sessions/" + sessions[s] + "/turns", Say("hello"));
    ASSERT_EQ(next.status, 200) << sessions[s] << ": " << next.body.dump();
    ++acknowledged[s];
    Reply trace = Call("GET", replicas[(s + 1) % 3]->base_url() + "/v1/sessions/" + sessions[s] + "/trace");
    ASSERT_EQ(trace.status, 200);
    const Json& turns = trace.body["turns"];
    // Every acknowledged turn is stored; a refused one may have committed before its
    // connection broke, never partly.
    EXPECT_GE(static_cast<int>(turns.size()), acknowledged[s]) << sessions[s];
    EXPECT_LE(static_cast<int>(turns.size()), acknowledged[s] + refused[s]) << sessions[s];
    for (size_t t = 0; t < turns.size(); ++t) {
      EXPECT_EQ(turns[t].value("turn_number", 0), static_cast<int>(t) + 1) << sessions[s];
      bool ended = false;
      for (const Json& e : turns[t]["events"]) ended = ended || e["type"] == "turn.completed" || e["type"] == "turn.failed";
      EXPECT_TRUE(ended) << sessions[s] << " turn " << t + 1 << " is stored without its end";
    }
  }
}

TEST(ReplicaFailuresE2eTest, AStalledDatabaseDoesNotStopTheServerAnsweringWhatDoesNotNeedIt) {
  testing::TestPostgres& pg = testing::TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  std::unique_ptr<ServerProcess> replica = StartReplica("tests/server/agent.yaml", pg.Url(db));
  const std::string id = NewSession(*replica);

  // Another client locks the turns table: the turn stalls on its first read of it.
  PGconn* locker = PQconnectdb(pg.Url(db).c_str());
  ASSERT_EQ(PQstatus(locker), CONNECTION_OK) << PQerrorMessage(locker);
  PQclear(PQexec(locker, "BEGIN"));
  PGresult* locked = PQexec(locker, "LOCK TABLE turns IN ACCESS EXCLUSIVE MODE");
  ASSERT_EQ(PQresultStatus(locked), PGRES_COMMAND_OK) << PQerrorMessage(locker);
  PQclear(locked);

  Reply stalled;
  std::thread turn([&] { stalled = Call("POST", replica->base_url() + "/v1/sessions/" + id + "/turns", Say("hello")); });
  // The turn waits on the lock once a connection of the database waits for one.
  const bool waiting = Eventually([&] {
    return pg.Query(db, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock'") != "0";
  }, 60);
  EXPECT_TRUE(waiting) << "the turn never waited on the lock";
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    Reply health = Call("GET", replica->base_url() + "/healthz");
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(health.status, 200);
    // The lock is held until after this loop, so a server thread that waited for the
    // database would not answer at all (its client waits a minute for a first byte);
    // the bound only has to stay above a busy machine's scheduling noise (200 ms was
    // exceeded by 10-40 ms on a loaded evening).
    EXPECT_LT(took, std::chrono::milliseconds(5000)) << "the server's thread waited for the database";
  }
  EXPECT_EQ(stalled.status, 0) << "the turn should still be waiting: " << stalled.body.dump();
  PQclear(PQexec(locker, "COMMIT"));
  PQfinish(locker);
  turn.join();
  EXPECT_EQ(stalled.status, 200) << stalled.body.dump();
}

}  // namespace
}  // namespace reins

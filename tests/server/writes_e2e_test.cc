// Immediate writes across a crash (I5, docs/deployment.md "Every write once"): the real
// `reins serve` killed with SIGKILL while a write is at its backend, restarted, and the
// client retrying the turn with its Idempotency-Key, as the deployment guide tells it
// to. On a SQLite file store and on two replicas sharing a PostgreSQL database, with a
// real HTTP tool endpoint that records the key of every delivery.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "server/api_client.h"
#include "server/server_process.h"
#include "store/sqlite_store.h"
#include "support/mock_upstream.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

using testing::Call;
using testing::MockUpstream;
using testing::Reply;
using testing::ServerProcess;

std::unique_ptr<ServerProcess> Serve(const std::string& config, const std::string& store) {
  auto s = std::make_unique<ServerProcess>(
      std::vector<std::string>{"--config", config, "--store", store, "--rate", "1000000", "--burst", "1000000"});
  EXPECT_GT(s->port(), 0) << "the server did not start: " << s->first_line() << s->Log();
  return s;
}

std::string NewSession(const ServerProcess& on) {
  Reply r = Call("POST", on.base_url() + "/v1/sessions", "{}");
  EXPECT_EQ(r.status, 201) << r.body.dump();
  return r.body.value("session_id", "");
}

std::string Say(const std::string& text) { return Json{{"speaker", "user"}, {"say", text}}.dump(); }
std::vector<HttpHeaderField> Key(const std::string& key) { return {{"Idempotency-Key", key}}; }

bool Eventually(const std::function<bool()>& done, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// An agent with two immediate writes: `book_table` posts to `venue` (an http backend:
// it takes an idempotency key), `send_card` is a slow fixture (its backend takes none).
// A turn ends at `turn_timeout_ms`: the server must be killed before, while its write
// is at the backend.
std::string BookingAgent(const MockUpstream& venue, const std::string& tag, int turn_timeout_ms = 60000) {
  const std::string path = ::testing::TempDir() + "writes_agent_" + tag + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << R"yaml(name: bookings
system_prompt: You book tables and send cards.
model:
  provider: scripted
  replies:
    - { when: { last: user, user_matches: table }, repeat: true, tool_calls: [ { name: book_table, args: { guests: 4 } } ] }
    - { when: { last: user, user_matches: card }, repeat: true, tool_calls: [ { name: send_card, args: { to: Ana } } ] }
    - { when: { last: tool, after_tool: book_table }, repeat: true, text: "Your table for four is booked." }
    - { when: { last: tool }, repeat: true, text: "Anything else I can do?" }
limits: { turn_timeout_ms: )yaml" << turn_timeout_ms << R"yaml( }
deferred: { timeout_ms: 100 }
tools:
  - name: book_table
    title: table booking
    timing: immediate
    timeout_ms: 60000
    input_schema: { type: object, properties: { guests: { type: integer } }, required: [guests] }
    backend: { http: { url: ")yaml" << venue.base_url() << R"yaml(/bookings", timeout_ms: 60000 } }
  - name: send_card
    title: card
    timing: immediate
    timeout_ms: 60000
    input_schema: { type: object, properties: { to: { type: string } }, required: [to] }
    backend:
      fixture:
        - { latency_ms: 60000, result: { success: true, data: { sent: true } } }
)yaml";
  return path;
}

std::set<std::string> KeysSeen(const MockUpstream& venue) {
  std::set<std::string> keys;
  for (const testing::RecordedRequest& r : venue.requests()) {
    keys.insert(r.headers.count("idempotency-key") ? r.headers.at("idempotency-key") : "");
  }
  return keys;
}

int Count(const Json& turn, const std::string& type) {
  int n = 0;
  for (const Json& e : turn["events"]) n += e["type"] == type;
  return n;
}

class SqliteWritesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = "/tmp/reins_writes_" + std::to_string(::getpid()) + ".db";
    Remove();
  }
  void TearDown() override { Remove(); }
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db_ + suffix).c_str());
  }
  // Sends `say` under `key` while `server` is killed as soon as `at_backend` holds.
  void KillDuring(std::unique_ptr<ServerProcess>& server, const std::string& id, const std::string& say,
                  const std::string& key, const std::function<bool()>& at_backend) {
    std::thread client([&] { Call("POST", server->base_url() + "/v1/sessions/" + id + "/turns", Say(say), Key(key)); });
    const bool reached = Eventually(at_backend, 60);
    if (!reached) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    server->Signal(SIGKILL);
    server->Wait();
    client.join();
    EXPECT_TRUE(reached) << "the write never reached its backend";
  }
  std::vector<WriteRecord> Writes(const std::string& id) {
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(db_);
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (!store.ok()) return {};
    Result<std::vector<WriteRecord>> writes = (*store)->LoadWrites(id);
    EXPECT_TRUE(writes.ok());
    return writes.ok() ? *writes : std::vector<WriteRecord>{};
  }
  std::string db_;
};

TEST_F(SqliteWritesTest, AWriteInFlightWhenTheServerIsKilledRunsOnceUnderItsOneKey) {
  MockUpstream venue;
  testing::MockReply held = MockUpstream::Json(200, R"({"success":true,"data":{"booking":"b_1"}})");
  held.first_byte_delay_ms = 60000;  // the first delivery never returns: the server dies first
  venue.Enqueue(held);
  venue.Enqueue(MockUpstream::Json(200, R"({"success":true,"data":{"booking":"b_1"}})"));
  const std::string config = BookingAgent(venue, "sqlite");
  std::unique_ptr<ServerProcess> server = Serve(config, "sqlite:" + db_);
  const std::string id = NewSession(*server);
  KillDuring(server, id, "A table for four, please", "book-1", [&] { return venue.requests().size() == 1; });
  ASSERT_EQ(Writes(id).size(), 1u) << "the intent is committed before the write runs";
  EXPECT_EQ(Writes(id)[0].state, WriteRecord::State::kRunning);

  server = Serve(config, "sqlite:" + db_);
  Reply retried = Call("POST", server->base_url() + "/v1/sessions/" + id + "/turns", Say("A table for four, please"),
                       Key("book-1"));
  ASSERT_EQ(retried.status, 200) << retried.body.dump();
  EXPECT_EQ(retried.body["status"], "completed");
  EXPECT_EQ(retried.body["reply"], "Your table for four is booked.");
  ASSERT_EQ(venue.requests().size(), 2u);
  const std::set<std::string> keys = KeysSeen(venue);
  ASSERT_EQ(keys.size(), 1u) << "the second delivery carries the first one's key";
  EXPECT_TRUE(keys.begin()->starts_with("w_")) << *keys.begin();

  const std::vector<WriteRecord> writes = Writes(id);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].state, WriteRecord::State::kSucceeded);
  EXPECT_EQ(writes[0].attempts, 2);
  Reply trace = Call("GET", server->base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.body["turns"].size(), 1u) << trace.body.dump();
  const Json& turn = trace.body["turns"][0];
  ASSERT_EQ(Count(turn, "tool.executed"), 1);
  for (const Json& e : turn["events"]) {
    if (e["type"] != "tool.executed") continue;
    EXPECT_EQ(e["data"]["attempt"], 2);
    EXPECT_EQ(e["data"]["write_key"], writes[0].key);
  }
  Reply metrics = Call("GET", server->base_url() + "/metrics");
  EXPECT_NE(metrics.raw.body.find(R"(reins_writes_total{outcome="retried",tool="book_table"} 1)"), std::string::npos)
      << metrics.raw.body;

  // Once the turn is committed, the same request again is that turn's stored result:
  // nothing reaches the venue.
  Reply again = Call("POST", server->base_url() + "/v1/sessions/" + id + "/turns", Say("A table for four, please"),
                     Key("book-1"));
  EXPECT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(again.body["turn_id"], retried.body["turn_id"]);
  EXPECT_EQ(venue.requests().size(), 2u);
}

TEST_F(SqliteWritesTest, AWriteWhoseBackendTakesNoKeyIsNotRunAgainAndThePersonIsTold) {
  MockUpstream venue;
  const std::string config = BookingAgent(venue, "card");
  std::unique_ptr<ServerProcess> server = Serve(config, "sqlite:" + db_);
  const std::string id = NewSession(*server);
  KillDuring(server, id, "Send Ana a card", "card-1", [&] { return Writes(id).size() == 1; });

  server = Serve(config, "sqlite:" + db_);
  Reply retried = Call("POST", server->base_url() + "/v1/sessions/" + id + "/turns", Say("Send Ana a card"),
                       Key("card-1"));
  ASSERT_EQ(retried.status, 200) << retried.body.dump();
  EXPECT_EQ(retried.body["status"], "completed");
  const std::string reply = retried.body.value("reply", "");
  EXPECT_NE(reply.find("I can't tell whether the card went through"), std::string::npos) << reply;
  ASSERT_EQ(retried.body["tools"].size(), 1u) << retried.body.dump();
  EXPECT_EQ(retried.body["tools"][0]["status"], "skipped");
  EXPECT_EQ(retried.body["tools"][0]["reason"], "uncertain");

  const std::vector<WriteRecord> writes = Writes(id);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].state, WriteRecord::State::kUncertain);
  EXPECT_EQ(writes[0].attempts, 1) << "not run again";
  Reply trace = Call("GET", server->base_url() + "/v1/sessions/" + id + "/trace");
  const Json& turn = trace.body["turns"][0];
  EXPECT_EQ(Count(turn, "write.uncertain"), 1);
  EXPECT_EQ(Count(turn, "tool.executed"), 0);
  Reply metrics = Call("GET", server->base_url() + "/metrics");
  EXPECT_NE(metrics.raw.body.find(R"(reins_writes_total{outcome="uncertain",tool="send_card"} 1)"), std::string::npos)
      << metrics.raw.body;
}

// Two replicas on PostgreSQL: the one running the write is killed; the client retries on
// the other once the dead one's claim on the session lapses.
TEST(PostgresWritesTest, AWriteWhoseReplicaWasKilledRunsOnceWhenTheTurnIsRetriedOnAnother) {
  MockUpstream venue;
  testing::MockReply held = MockUpstream::Json(200, R"({"success":true,"data":{"booking":"b_7"}})");
  held.first_byte_delay_ms = 60000;
  venue.Enqueue(held);
  venue.Enqueue(MockUpstream::Json(200, R"({"success":true,"data":{"booking":"b_7"}})"));
  // The retry waits for the dead replica's claim, which lapses 30 s after the turn's
  // time (runtime_turn.cc): a short turn keeps the wait short; the kill comes 50 ms after
  // the write reached the venue.
  const std::string config = BookingAgent(venue, "pg", 4000);
  testing::TestPostgres& pg = testing::TestPostgres::Shared();
  const std::string store = pg.Url(pg.NewDatabase());
  std::unique_ptr<ServerProcess> a = Serve(config, store);
  std::unique_ptr<ServerProcess> b = Serve(config, store);
  const std::string id = NewSession(*a);
  std::thread client([&] {
    Call("POST", a->base_url() + "/v1/sessions/" + id + "/turns", Say("A table for four, please"), Key("book-7"));
  });
  ASSERT_TRUE(Eventually([&] { return venue.requests().size() == 1; }, 60)) << a->Log();
  a->Signal(SIGKILL);
  a->Wait();
  client.join();

  // The retry waits for the dead replica's claim to lapse (503 meanwhile), then runs.
  Reply retried;
  ASSERT_TRUE(Eventually([&] {
    retried = Call("POST", b->base_url() + "/v1/sessions/" + id + "/turns", Say("A table for four, please"),
                   Key("book-7"));
    return retried.status == 200;
  }, 90)) << retried.status << " " << retried.body.dump();
  EXPECT_EQ(retried.body["status"], "completed");
  EXPECT_EQ(venue.requests().size(), 2u);
  EXPECT_EQ(KeysSeen(venue).size(), 1u) << "one key for both deliveries";
  Reply trace = Call("GET", b->base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.body["turns"].size(), 1u) << trace.body.dump();
  int executed = 0;
  for (const Json& e : trace.body["turns"][0]["events"]) {
    if (e["type"] != "tool.executed") continue;
    ++executed;
    EXPECT_EQ(e["data"]["attempt"], 2);
  }
  EXPECT_EQ(executed, 1);
}

}  // namespace
}  // namespace reins

// `reins migrate --from sqlite:PATH --to postgres://...` end to end: sessions made by
// running the examples' scenarios into a SQLite file store are copied into a real
// PostgreSQL database: every table has the same rows, and every session reads back the
// same through the Store interface from both.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "reins/json.h"
#include "reins/store.h"
#include "reins/trace.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

struct Ran {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

Ran Reins(const std::string& args) {
  Ran ran;
  FILE* pipe = popen((std::string(REINS_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) ran.out.append(buf.data(), n);
  const int status = pclose(pipe);
  ran.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

class MigrateCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("reins_migrate_copy_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    sqlite_ = "sqlite:" + (dir_ / "one.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string sqlite_;
};

// What one session looks like through the Store interface, every part of it.
Json Snapshot(Store& store, const std::string& id) {
  Json out;
  Result<SessionRecord> session = store.LoadSession(id);
  if (!session.ok()) return Json{{"error", session.status().message()}};
  out["session"] = {{"tenant", session->tenant}, {"created_at", session->created_at_ms}, {"metadata", session->metadata},
                    {"state", session->state}, {"turns", session->turn_count}};
  const std::vector<StoredTurn> turns = store.LoadTurns(id).value();
  for (const StoredTurn& t : turns) {
    Json events = Json::array();
    for (const TraceEvent& e : t.events) events.push_back(TraceEventToJson(e));
    out["turns"].push_back({{"id", t.turn_id}, {"number", t.turn_number}, {"speaker", t.speaker}, {"status", t.status},
                            {"reply", t.reply}, {"input", t.input}, {"result", t.result}, {"events", events}});
  }
  const std::vector<StoredInvocation> invocations = store.LoadInvocations(id).value();
  for (const StoredInvocation& i : invocations) {
    out["invocations"].push_back({{"turn", i.turn_id}, {"name", i.name}, {"args", i.args}, {"status", i.status},
                                  {"reason", i.reason}, {"result", i.result}, {"deferred", i.deferred}});
  }
  const std::vector<OutboxEntry> outbox = store.LoadOutbox(id).value();
  for (const OutboxEntry& o : outbox) {
    out["outbox"].push_back({{"key", o.key}, {"tool", o.tool}, {"args", o.args}, {"status", o.status},
                             {"attempts", o.attempts}, {"result", o.result}, {"step", o.step_id}});
  }
  const std::vector<Notice> notices = store.PendingNotices(id).value();
  for (const Notice& n : notices) out["notices"].push_back({{"turn", n.turn_id}, {"text", n.text}});
  Lease lease = store.LoadLease(id).value();
  out["lease"] = {{"owner", lease.owner}, {"domain", lease.domain}, {"version", lease.version}};
  out["messages"] = store.LoadMessages(id).value().size();
  return out;
}

TEST_F(MigrateCopyTest, EverySessionReadsTheSameFromPostgresAfterTheCopy) {
  // Clarifications, approvals, plans, deferred writes and their failures, notices.
  for (const char* scenarios : {"examples/care-chat/scenarios", "examples/messaging/scenarios",
                                "examples/research-planner/scenarios"}) {
    for (const auto& file : std::filesystem::directory_iterator(scenarios)) {
      Ran run = Reins("run --store " + sqlite_ + " " + file.path().string());
      ASSERT_NE(run.out.find("stored in"), std::string::npos) << file.path() << ": " << run.out;
    }
  }
  testing::TestPostgres& pg = testing::TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  const std::string postgres = pg.Url(db);

  Ran copy = Reins("migrate --from " + sqlite_ + " --to '" + postgres + "'");
  ASSERT_EQ(copy.rc, 0) << copy.out;
  EXPECT_NE(copy.out.find("turns: "), std::string::npos) << copy.out;

  // Every table, row for row.
  {
    SQLite::Database sqlite((dir_ / "one.db").string(), SQLite::OPEN_READONLY);
    for (const char* table : {"sessions", "turns", "tool_invocations", "clarifications", "clarification_options",
                              "outbox", "notices", "leases", "approvals"}) {
      const std::string count = std::string("SELECT COUNT(*) FROM ") + table;
      EXPECT_EQ(pg.Query(db, count), std::to_string(sqlite.execAndGet(count).getInt64())) << table;
    }
    EXPECT_GT(sqlite.execAndGet("SELECT COUNT(*) FROM approvals").getInt(), 0);
    EXPECT_GT(sqlite.execAndGet("SELECT COUNT(*) FROM clarification_options").getInt(), 0);
    EXPECT_GT(sqlite.execAndGet("SELECT COUNT(*) FROM notices").getInt(), 0);
  }
  // And every session reads back the same through the Store interface.
  std::unique_ptr<Store> from = OpenStore(sqlite_).value();
  std::unique_ptr<Store> to = OpenStore(postgres).value();
  const std::vector<SessionRecord> sessions = from->ListSessions().value();
  ASSERT_GT(sessions.size(), 10u);
  EXPECT_EQ(to->ListSessions().value().size(), sessions.size());
  for (const SessionRecord& session : sessions) {
    EXPECT_EQ(Snapshot(*to, session.id), Snapshot(*from, session.id)) << session.id;
  }

  // A second copy into the same database is refused whole.
  Ran again = Reins("migrate --from " + sqlite_ + " --to '" + postgres + "'");
  EXPECT_EQ(again.rc, 1);
  EXPECT_NE(again.out.find("already holds"), std::string::npos) << again.out;
  EXPECT_EQ(to->ListSessions().value().size(), sessions.size());
}

TEST_F(MigrateCopyTest, WrongStoresAreRefusedWithWhatToDo) {
  testing::TestPostgres& pg = testing::TestPostgres::Shared();
  const std::string postgres = pg.Url(pg.NewDatabase());
  Ran missing = Reins("migrate --from " + sqlite_ + " --to '" + postgres + "'");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.out.find("no SQLite store at"), std::string::npos) << missing.out;
  Ran memory = Reins("migrate --from sqlite::memory: --to '" + postgres + "'");
  EXPECT_EQ(memory.rc, 2);
  EXPECT_NE(memory.out.find("--from must be a SQLite file store"), std::string::npos) << memory.out;
  Ran backwards = Reins("migrate --from '" + postgres + "' --to " + sqlite_);
  EXPECT_EQ(backwards.rc, 2) << backwards.out;
  Ran half = Reins("migrate --from " + sqlite_);
  EXPECT_NE(half.rc, 0);
  EXPECT_NE(half.out.find("--to"), std::string::npos) << half.out;
}

}  // namespace
}  // namespace reins

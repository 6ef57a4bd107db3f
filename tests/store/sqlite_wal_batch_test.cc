// The batching VFS (store/sqlite_wal_batch.h) must leave the database exactly as the
// default VFS would: every commit readable by another connection the moment it returns,
// through checkpoints and log restarts, transactions that spill to the log before they
// commit or roll back, and a process killed right after a commit.
#include "store/sqlite_wal_batch.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "support/sqlite_files.h"

namespace reins::store {
namespace {

class WalBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TestDatabasePath("wal_batch");
    testing::RemoveDatabaseFiles(path_);
    db_ = Open(WalBatchVfs());
    Exec(db_, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
              "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  }
  void TearDown() override {
    sqlite3_close(db_);
    testing::RemoveDatabaseFiles(path_);
  }
  sqlite3* Open(const char* vfs) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs), SQLITE_OK);
    return db;
  }
  static void Exec(sqlite3* db, const std::string& sql) {
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << ": " << sql.substr(0, 80);
  }
  static std::string Text(sqlite3* db, const std::string& sql) {
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string out;
    if (sqlite3_step(q) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    return out;
  }
  // What another connection, through SQLite's default VFS, reads now.
  std::string Seen(const std::string& sql) {
    sqlite3* other = Open(nullptr);
    std::string out = Text(other, sql);
    sqlite3_close(other);
    return out;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
};

TEST_F(WalBatchTest, EveryCommitIsReadableElsewhereWhenItReturnsThroughCheckpointsAndRestarts) {
  Exec(db_, "PRAGMA wal_autocheckpoint = 20");  // checkpoints and log restarts every few commits
  const std::string body(3000, 'x');            // a page of its own each
  for (int i = 1; i <= 300; ++i) {
    Exec(db_, "INSERT INTO t (body) VALUES ('" + body + std::to_string(i) + "')");
    if (i % 37 == 0) {
      ASSERT_EQ(Seen("SELECT COUNT(*) FROM t"), std::to_string(i));
    }
  }
  EXPECT_EQ(Seen("SELECT MAX(id) FROM t"), "300");
  EXPECT_EQ(Seen("PRAGMA integrity_check"), "ok");
}

TEST_F(WalBatchTest, ATransactionThatSpillsBeforeItCommitsOrRollsBackLeavesNoTrace) {
  Exec(db_, "PRAGMA cache_size = 10");  // a large transaction writes frames before its commit
  const std::string body(2000, 'y');
  Exec(db_, "INSERT INTO t (body) VALUES ('before')");
  std::string big = "BEGIN;";
  for (int i = 0; i < 800; ++i) big += "INSERT INTO t (body) VALUES ('" + body + "');";
  Exec(db_, big + "ROLLBACK");
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t"), "1");
  Exec(db_, big + "COMMIT");  // 1.6 MB: many times what one write takes
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t"), "801");
  Exec(db_, "INSERT INTO t (body) VALUES ('after')");
  EXPECT_EQ(Seen("SELECT body FROM t ORDER BY id DESC LIMIT 1"), "after");
  EXPECT_EQ(Seen("PRAGMA integrity_check"), "ok");
}

TEST_F(WalBatchTest, AProcessKilledRightAfterACommitLosesNothing) {
  sqlite3_close(db_);  // no connection crosses the fork
  db_ = nullptr;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, WalBatchVfs());
    sqlite3_exec(db, "PRAGMA synchronous = NORMAL", nullptr, nullptr, nullptr);
    for (int i = 0; i < 50; ++i) sqlite3_exec(db, "INSERT INTO t (body) VALUES ('child')", nullptr, nullptr, nullptr);
    ::raise(SIGKILL);  // no close, no checkpoint: only what each commit wrote
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  db_ = Open(WalBatchVfs());
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t WHERE body = 'child'"), "50");
  EXPECT_EQ(Seen("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace reins::store

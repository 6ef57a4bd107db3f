// The WalCheckpointer (store/sqlite_checkpointer.h) keeps the write-ahead log bounded
// without a commit copying it: the log starts over after each of its checkpoints, the
// writer checkpoints itself only past max_pages, and every commit stays readable.
#include "store/sqlite_checkpointer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "store/sqlite_wal_batch.h"
#include "support/sqlite_files.h"

namespace reins::store {
namespace {

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TestDatabasePath("checkpointer");
    testing::RemoveDatabaseFiles(path_);
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, WalBatchVfs()),
              SQLITE_OK);
    Exec("PRAGMA page_size = 1024; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
         "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  }
  void TearDown() override {
    checkpointer_.reset();
    sqlite3_close(db_);
    testing::RemoveDatabaseFiles(path_);
  }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  }
  void Start(int start_pages, int max_pages) {
    WalCheckpointer::Options options;
    options.start_pages = start_pages;
    options.max_pages = max_pages;
    checkpointer_ = WalCheckpointer::Start(db_, mu_, path_, WalBatchVfs(), options);
    ASSERT_NE(checkpointer_, nullptr);
  }
  // `n` commits of about two pages each, under the writer's mutex as the store makes them.
  void Commit(int n) {
    const std::string body(1500, 'x');
    for (int i = 0; i < n; ++i) {
      std::lock_guard lock(mu_);
      Exec("INSERT INTO t (body) VALUES ('" + body + "')");
    }
  }
  bool WaitForCompleted(int n) {
    for (int i = 0; i < 500 && checkpointer_->completed() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return checkpointer_->completed() >= n;
  }
  int64_t LogPages() const { return static_cast<int64_t>(std::filesystem::file_size(path_ + "-wal")) / 1024; }
  std::string Seen(const char* sql) const {
    sqlite3* other = nullptr;
    sqlite3_open_v2(path_.c_str(), &other, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* q = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(other, sql, -1, &q, nullptr) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    sqlite3_close(other);
    return out;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
  std::unique_ptr<WalCheckpointer> checkpointer_;
};

TEST_F(WalCheckpointerTest, CopiesTheLogOnItsOwnThreadAndTheLogStartsOver) {
  Start(/*start_pages=*/100, /*max_pages=*/1000000);
  for (int burst = 1; burst <= 10; ++burst) {
    const int before = checkpointer_->completed();
    Commit(60);  // about 170 pages, past start_pages: the checkpointer wakes
    ASSERT_TRUE(WaitForCompleted(before + 1)) << "burst " << burst;
  }
  // 600 commits wrote about 1,700 pages; the log went back to its start after a
  // checkpoint in or after each burst, so its file holds two or three bursts' worth.
  EXPECT_LT(LogPages(), 600);
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t"), "600");
  EXPECT_EQ(Seen("PRAGMA integrity_check"), "ok");
}

TEST_F(WalCheckpointerTest, TheWriterCheckpointsItselfPastMaxPages) {
  Start(/*start_pages=*/1000000, /*max_pages=*/100);  // the checkpointer never wakes
  Commit(400);
  EXPECT_EQ(checkpointer_->completed(), 0);
  EXPECT_LT(LogPages(), 300);
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t"), "400");
}

TEST_F(WalCheckpointerTest, CommitsGoOnWhileItCopiesAndNoneIsLost) {
  Start(/*start_pages=*/50, /*max_pages=*/1000000);
  std::thread writer([this] { Commit(2000); });
  writer.join();
  ASSERT_TRUE(WaitForCompleted(1));
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t"), "2000");
  checkpointer_.reset();  // the writer checkpoints itself again
  sqlite3_close(db_);
  db_ = nullptr;
  EXPECT_EQ(Seen("SELECT COUNT(*) FROM t"), "2000");
  EXPECT_EQ(Seen("PRAGMA integrity_check"), "ok");
}

TEST_F(WalCheckpointerTest, DoesNotStartOnADatabaseOutsideWalMode) {
  Exec("PRAGMA journal_mode = DELETE");
  EXPECT_EQ(WalCheckpointer::Start(db_, mu_, path_, WalBatchVfs(), {}), nullptr);
}

}  // namespace
}  // namespace reins::store

#include "store/sqlite_checkpointer.h"

#include <sqlite3.h>

#include <string>

namespace reins::store {
namespace {

// While commits keep adding more than this many pages during a checkpoint, the next
// round runs without the writer's mutex too; what is left after kBulkRounds is copied
// under it however much it is.
constexpr int kFewPages = 500;
constexpr int kBulkRounds = 4;

// The first column of the first row of `sql`, as text ("" when there is none).
std::string FirstText(sqlite3* db, const char* sql) {
  sqlite3_stmt* q = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql, -1, &q, nullptr) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
    if (const unsigned char* text = sqlite3_column_text(q, 0)) out = reinterpret_cast<const char*>(text);
  }
  sqlite3_finalize(q);
  return out;
}

}  // namespace

std::unique_ptr<WalCheckpointer> WalCheckpointer::Start(sqlite3* writer, std::mutex& writer_mu,
                                                        const std::string& path, const char* vfs, Options options) {
  sqlite3* own = nullptr;
  // NOMUTEX: the connection is used by the checkpointer's thread alone.
  if (sqlite3_open_v2(path.c_str(), &own, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                      vfs != nullptr && *vfs != '\0' ? vfs : nullptr) != SQLITE_OK) {
    sqlite3_close(own);
    return nullptr;
  }
  sqlite3_busy_timeout(own, 5000);
  // A connection learns that the database is in WAL mode from its first read; until
  // then a checkpoint on it does nothing. Its page cache stays small: a checkpoint
  // copies pages from the log to the file without it.
  const std::string sync = options.full_sync ? "FULL" : "NORMAL";
  const bool wal = !FirstText(own, "SELECT count(*) FROM sqlite_master").empty() &&
                   FirstText(own, "PRAGMA journal_mode") == "wal" &&
                   sqlite3_exec(own, ("PRAGMA synchronous = " + sync + "; PRAGMA cache_size = -64").c_str(), nullptr,
                                nullptr, nullptr) == SQLITE_OK;
  if (!wal) {
    sqlite3_close(own);
    return nullptr;
  }
  std::unique_ptr<WalCheckpointer> checkpointer(new WalCheckpointer(writer, writer_mu, own, options));
  sqlite3_wal_hook(writer, &WalCheckpointer::OnCommit, checkpointer.get());
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(sqlite3* writer, std::mutex& writer_mu, sqlite3* own, Options options)
    : writer_(writer), writer_mu_(writer_mu), own_(own), options_(options), thread_([this] { Run(); }) {}

WalCheckpointer::~WalCheckpointer() {
  // The writer checkpoints itself again, as SQLite does by default.
  sqlite3_wal_autocheckpoint(writer_, options_.start_pages);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_close(own_);
}

int WalCheckpointer::completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

int WalCheckpointer::OnCommit(void* arg, sqlite3* db, const char* name, int pages) {
  auto* self = static_cast<WalCheckpointer*>(arg);
  if (pages >= self->options_.max_pages) {
    // Busy (the checkpointer is copying) leaves it to the checkpointer.
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (pages >= self->options_.start_pages) {
    {
      std::lock_guard lock(self->mu_);
      self->woken_ = true;
    }
    self->wake_.notify_one();
  }
  return SQLITE_OK;
}

int WalCheckpointer::CheckpointOnce() {
  int log = 0;
  int copied = 0;
  if (sqlite3_wal_checkpoint_v2(own_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied) != SQLITE_OK || log < 0) {
    return -1;
  }
  return log - copied;
}

void WalCheckpointer::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return woken_ || stopping_; });
    if (stopping_) return;
    woken_ = false;
    lock.unlock();
    int left = CheckpointOnce();
    for (int round = 1; round < kBulkRounds && left > kFewPages; ++round) left = CheckpointOnce();
    bool complete = false;
    if (left >= 0) {
      std::lock_guard writer(writer_mu_);
      complete = CheckpointOnce() == 0;
    }
    lock.lock();
    if (complete) {
      ++completed_;
      woken_ = false;  // the commits that woke it meanwhile are copied too
    }
  }
}

}  // namespace reins::store

// WalCheckpointer: a SQLite database's write-ahead log copied back into the database
// file on a thread and a connection of its own, so that no commit waits for it.
//
// SQLite checkpoints inside the commit that takes the log past wal_autocheckpoint
// pages, on the thread that commits. The store has one connection behind one mutex, so
// every store call waited with that commit: an fsync of the log, up to 10 MB of pages
// copied, an fsync of the database: tens of milliseconds on the VM of docs/PERFORMANCE.md
// (round 25), about once a second at 2,000 turns a second, which set a scale run's p99.
//
// Here the writer's log hook (sqlite3_wal_hook, which replaces SQLite's own
// checkpoint) only wakes the checkpointer once the log holds `start_pages`. It copies
// in two steps: the bulk of the log while commits go on (a PASSIVE checkpoint takes no
// writer lock), and then, holding the writer's mutex so that nothing commits meanwhile,
// the few pages committed during the first step. With every page copied, SQLite starts
// the log over at the next commit instead of letting the file grow. Should the log still
// reach `max_pages` (the checkpointer fell behind, or cannot run), the writer
// checkpoints itself inside its commit, as SQLite would have.
//
// What a commit guarantees does not change: it is in the log when it returns, and the
// log is fsynced before any of it is copied (synchronous = NORMAL or FULL, as the
// writer's).
//
// Threading: OnCommit runs on the writer's thread inside a commit, under the writer's
// mutex; everything else runs on the checkpointer's thread. The destructor stops that
// thread and unhooks the writer; no commit may run meanwhile.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

struct sqlite3;

namespace reins::store {

class WalCheckpointer {
 public:
  struct Options {
    int start_pages = 10000;  // the log's size that wakes the checkpointer
    int max_pages = 40000;    // the size at which the writer checkpoints itself
    bool full_sync = false;   // synchronous = FULL rather than NORMAL on its connection
  };

  // Opens the checkpointer's connection to the file at `path` through `vfs` (the
  // writer's) and hooks `writer`, whose calls `writer_mu` guards. Null when the
  // database is not in WAL mode or cannot be opened again: SQLite's own checkpoints
  // then stay in place.
  static std::unique_ptr<WalCheckpointer> Start(sqlite3* writer, std::mutex& writer_mu, const std::string& path,
                                                const char* vfs, Options options);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Checkpoints that left every page of the log copied, so far (for tests).
  int completed() const;

 private:
  WalCheckpointer(sqlite3* writer, std::mutex& writer_mu, sqlite3* own, Options options);
  // sqlite3_wal_hook's callback: `pages` is the log's size after the commit.
  static int OnCommit(void* self, sqlite3* db, const char* name, int pages);
  void Run();
  // One PASSIVE checkpoint on the own connection: the pages it left to copy, or -1
  // when it could not run.
  int CheckpointOnce();

  sqlite3* const writer_;
  std::mutex& writer_mu_;
  sqlite3* const own_;
  const Options options_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool woken_ = false;     // under mu_
  bool stopping_ = false;  // under mu_
  int completed_ = 0;      // under mu_
  std::thread thread_;     // last: started once the rest is set
};

}  // namespace reins::store

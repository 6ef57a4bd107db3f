// SqliteStore: the Store of reins/store.h on one SQLite connection.
//
// File databases run in WAL mode so readers (`reins trace`) never block the runtime's
// writer; ":memory:" gives a private in-memory database. One connection is shared by
// every caller and guarded by a mutex: SQLite connections are not safe to use from two
// threads at once, and every call is short. On many event loops that mutex is what
// bounds the turns a second (docs/PERFORMANCE.md, "Many cores"), so a commit renders its
// rows before taking it. A second connection, on a thread of its own, only copies the
// write-ahead log back into the file (store/sqlite_checkpointer.h).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "reins/store.h"

namespace SQLite {
class Database;
}  // namespace SQLite

namespace reins {
namespace store {
class StatementCache;
class WalCheckpointer;
}  // namespace store

class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) and migrates the database at `path`; ":memory:" for an
  // in-memory one. Unavailable when it cannot be opened, FailedPrecondition when its
  // schema is newer than this build.
  // How a commit reaches the disk. kProcessCrash (WAL, synchronous=NORMAL): a commit
  // survives the process being killed at any point; a power cut may lose the last
  // commits. kPowerLoss (synchronous=FULL): every commit is fsynced before it returns.
  enum class Durability { kProcessCrash, kPowerLoss };
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   Durability durability = Durability::kProcessCrash);
  ~SqliteStore() override;

  Status CreateSession(const SessionRecord& session) override;
  Result<SessionRecord> LoadSession(const std::string& session_id) override;
  Result<std::string> LoadTenant(const std::string& session_id) override;
  Result<std::vector<SessionRecord>> ListSessions() override;
  Result<std::vector<RecentSession>> RecentSessions(const std::optional<std::string>& tenant, int limit) override;
  Result<int64_t> CountSessions(std::optional<std::string> tenant) override;
  Result<std::vector<Message>> LoadMessages(const std::string& session_id, TurnRange range = {}) override;
  Status CommitTurn(const TurnRecord& turn) override;  // sqlite_commit.cc
  std::vector<Status> CommitTurns(const std::vector<const TurnRecord*>& turns) override;  // sqlite_commit.cc
  Result<std::vector<StoredTurn>> LoadTurns(const std::string& session_id, TurnRange range = {}) override;
  Result<std::vector<StoredInvocation>> LoadInvocations(const std::string& session_id, TurnRange range = {}) override;
  Result<std::optional<StoredTurn>> FindTurnByKey(const std::string& session_id,
                                                  const std::string& idempotency_key) override;
  Status LinkConversation(const std::string& tenant, const std::string& digest, const std::string& session_id,
                          int64_t at_ms) override;
  Result<std::vector<std::string>> FindConversation(const std::string& tenant, const std::string& digest,
                                                    int limit) override;
  // The outbox and notices: sqlite_outbox.cc
  Result<bool> ClaimOutbox(const std::string& key, int64_t now_ms) override;
  Status StageOutbox(const std::vector<OutboxEntry>& entries) override;
  Status RecordDeferredOutcome(const DeferredOutcome& outcome) override;
  Result<std::vector<OutboxEntry>> UnfinishedOutbox() override;
  Result<std::vector<OutboxEntry>> LoadOutbox(const std::string& session_id) override;
  Result<std::vector<Notice>> PendingNotices(const std::string& session_id) override;
  // The write-ahead record of immediate writes: sqlite_writes.cc
  Result<std::optional<WriteRecord>> BeginWrite(const WriteRecord& intent) override;
  Status RetryWrite(const WriteRecord& retry) override;
  Status FinishWrite(const WriteRecord& outcome) override;
  Result<std::vector<WriteRecord>> LoadWrites(const std::string& session_id) override;
  // Floor leases: sqlite_lease.cc
  Result<Lease> LoadLease(const std::string& session_id) override;
  Result<int64_t> SetLease(const std::string& session_id, const Lease& lease, int64_t expected_version) override;

 private:
  explicit SqliteStore(std::unique_ptr<SQLite::Database> db);
  // The write-ahead log's size, in pages, at which a checkpoint starts.
  static constexpr int kCheckpointPages = 10000;

  std::mutex mu_;
  std::unique_ptr<SQLite::Database> db_;                 // guarded by mu_
  std::unique_ptr<store::StatementCache> statements_;    // guarded by mu_; declared after db_
  // Copies the write-ahead log back into the file off the commits' path; null for
  // ":memory:". Declared last: stopped before the connection closes.
  std::unique_ptr<store::WalCheckpointer> checkpointer_;
};

}  // namespace reins

// SqliteStore's floor leases: compare-and-set on a version number, so a lease is
// taken or released only by the writer that saw the current state.
#include "store/sqlite_store.h"
#include "store/sqlite_util.h"

namespace reins {
namespace store {

// The CAS itself, inside whatever transaction the caller holds. Inserts the row on a
// session's first lease (expected version 0).
Result<int64_t> CompareAndSetLease(StatementCache& sc, const std::string& session_id, const Lease& lease,
                                   int64_t expected_version) {
  SQLite::Statement& update = sc.Get(
      "UPDATE leases SET owner = ?, domain = ?, expires_at = ?, version = version + 1 "
      "WHERE session_id = ? AND version = ?");
  update.bind(1, lease.owner);
  update.bind(2, lease.domain);
  update.bind(3, lease.expires_at_ms);
  update.bind(4, session_id);
  update.bind(5, expected_version);
  if (update.exec() == 1) return expected_version + 1;
  if (expected_version == 0) {
    SQLite::Statement& insert = sc.Get(
        "INSERT OR IGNORE INTO leases (session_id, owner, domain, expires_at, version) VALUES (?, ?, ?, ?, 1)");
    insert.bind(1, session_id);
    insert.bind(2, lease.owner);
    insert.bind(3, lease.domain);
    insert.bind(4, lease.expires_at_ms);
    if (insert.exec() == 1) return int64_t{1};
  }
  return FailedPrecondition("the floor lease of session '" + session_id + "' changed since version " +
                            std::to_string(expected_version));
}

}  // namespace store

Result<Lease> SqliteStore::LoadLease(const std::string& session_id) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return store::Guarded("cannot load the lease of session '" + session_id + "'", [&]() -> Result<Lease> {
    SQLite::Statement& q = statements_->Get("SELECT owner, domain, expires_at, version FROM leases WHERE session_id = ?");
    q.bind(1, session_id);
    Lease lease;
    if (q.executeStep()) {
      lease.owner = q.getColumn(0).getString();
      lease.domain = q.getColumn(1).getString();
      lease.expires_at_ms = q.getColumn(2).getInt64();
      lease.version = q.getColumn(3).getInt64();
    }
    return lease;
  });
}

Result<int64_t> SqliteStore::SetLease(const std::string& session_id, const Lease& lease, int64_t expected_version) {
  std::lock_guard lock(mu_);
  return store::Guarded("cannot set the lease of session '" + session_id + "'", [&]() -> Result<int64_t> {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    store::ResetOnExit reset(*statements_);
    if (!store::SessionExists(*statements_, session_id)) return store::SessionNotFound(session_id);
    Result<int64_t> version = store::CompareAndSetLease(*statements_, session_id, lease, expected_version);
    if (version.ok()) tx.commit();
    return version;
  });
}

}  // namespace reins

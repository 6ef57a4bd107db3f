// Helpers shared by the SqliteStore sources. Internal to src/store/.
//
// SQLiteCpp reports errors by throwing; inside the store we let it, and Guarded()
// converts every exception into a Status at the public method's edge, so none leaves
// the module.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "reins/agent_config.h"
#include "reins/json.h"
#include "reins/status.h"
#include "reins/trace.h"
#include "reins/turn.h"
#include "store/row_json.h"

namespace reins::store {

// A stored row that cannot be read back (corrupt JSON). Never leaves src/store/.
class CorruptRow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads a JSON column: SQL NULL is JSON null; unparsable text throws CorruptRow
// naming `where`.
Json ColumnJson(const SQLite::Column& column, const std::string& where);

// The columns every insert into the outbox binds, in this order: key, session_id,
// turn_id, tool, args, mode (?1-?6), created_at and updated_at both `at_ms` (?7, ?8),
// step_id (?9). The turn's commit and a streamed reply's staging share it.
void BindOutboxRow(SQLite::Statement& q, const std::string& key, const std::string& session_id,
                   const std::string& turn_id, const std::string& tool, const Json& args, DeferredMode mode,
                   int64_t at_ms, const std::string& step_id);

// Maps a SQLite error: constraint violations on keys are AlreadyExists, a busy or
// locked database is Unavailable, anything else Internal. `what` names the operation.
Status StatusFromSqlite(const SQLite::Exception& e, const std::string& what);

// Prepared statements, compiled once per connection and reused: preparing SQL costs
// more than running these short statements. Not thread-safe; used under the store's
// mutex. ResetAll() at the end of every store call releases read cursors and clears
// every binding: the per-turn writes bind their longer text with bindNoCopy (SQLite
// reads it where it is; a copy was an allocation per column, 26 per turn), so the text
// must stay alive until the statement has run, and no statement keeps a pointer to it
// once the call has returned.
class StatementCache {
 public:
  explicit StatementCache(SQLite::Database& db) : db_(db) {}
  // The statement for `sql`, reset and with no bindings.
  SQLite::Statement& Get(const std::string& sql);
  void ResetAll() noexcept;
  SQLite::Database& db() { return db_; }

 private:
  SQLite::Database& db_;
  std::unordered_map<std::string, std::unique_ptr<SQLite::Statement>> statements_;
  std::vector<SQLite::Statement*> used_;  // handed out by Get since the last ResetAll
};

// BEGIN IMMEDIATE ... COMMIT with cached statements (SQLite::Transaction parses its
// SQL on every use, which showed in the per-turn commit cost). Rolls back unless
// Commit() was called.
class CachedTransaction {
 public:
  explicit CachedTransaction(StatementCache& cache);
  ~CachedTransaction();
  void Commit();
  CachedTransaction(const CachedTransaction&) = delete;
  CachedTransaction& operator=(const CachedTransaction&) = delete;

 private:
  StatementCache& cache_;
  bool done_ = false;
};

// Resets every cached statement when a store call ends, however it ends.
class ResetOnExit {
 public:
  explicit ResetOnExit(StatementCache& cache) : cache_(cache) {}
  ~ResetOnExit() { cache_.ResetAll(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  StatementCache& cache_;
};

bool SessionExists(StatementCache& db, const std::string& session_id);
// Inserts `session` with `state` (JSON text) and `turn_count` in place of its own:
// CreateSession's new session, or the one a turn begins, as the turn leaves it.
// AlreadyExists when a session has its id.
Status InsertSession(StatementCache& db, const SessionRecord& session, const std::string& state, int turn_count);
// The lease compare-and-set, inside the caller's transaction (sqlite_lease.cc).
Result<int64_t> CompareAndSetLease(StatementCache& sc, const std::string& session_id, const Lease& lease,
                                   int64_t expected_version);

// Runs `body` (returning a Result) and turns any exception into an error Status.
template <typename F>
auto Guarded(const std::string& what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    return StatusFromSqlite(e, what);
  } catch (const CorruptRow& e) {
    return Internal(what + ": " + e.what());
  } catch (const std::exception& e) {
    return Internal(what + ": " + e.what());
  }
}

}  // namespace reins::store

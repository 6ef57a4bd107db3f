#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <mutex>
#include <utility>

#include "store/migrations.h"
#include "store/sqlite_checkpointer.h"
#include "store/sqlite_util.h"
#include "store/sqlite_wal_batch.h"

namespace reins {
namespace store {

Json ColumnJson(const SQLite::Column& column, const std::string& where) {
  if (column.isNull()) return Json(nullptr);
  Result<Json> j = ParseStoredJson(column.getString(), where);
  if (!j.ok()) throw CorruptRow(j.status().message());
  return std::move(j).value();
}

void BindOutboxRow(SQLite::Statement& q, const std::string& key, const std::string& session_id,
                   const std::string& turn_id, const std::string& tool, const Json& args, DeferredMode mode,
                   int64_t at_ms, const std::string& step_id) {
  q.bind(1, key);
  q.bind(2, session_id);
  q.bind(3, turn_id);
  q.bind(4, tool);
  q.bind(5, DumpJson(args));
  q.bind(6, std::string(kDeferredModes.Name(mode)));
  q.bind(7, at_ms);
  q.bind(8, at_ms);
  q.bind(9, step_id);
}

Status StatusFromSqlite(const SQLite::Exception& e, const std::string& what) {
  const int extended = e.getExtendedErrorCode();
  if (extended == SQLITE_CONSTRAINT_PRIMARYKEY || extended == SQLITE_CONSTRAINT_UNIQUE) {
    return Status(StatusCode::kAlreadyExists, what + ": " + e.what());
  }
  if (e.getErrorCode() == SQLITE_BUSY || e.getErrorCode() == SQLITE_LOCKED) {
    return Unavailable(what + ": the database is busy: " + e.what());
  }
  return Internal(what + ": " + e.what());
}

SQLite::Statement& StatementCache::Get(const std::string& sql) {
  std::unique_ptr<SQLite::Statement>& slot = statements_[sql];
  if (!slot) {
    slot = std::make_unique<SQLite::Statement>(db_, sql);
  } else {
    slot->reset();
    slot->clearBindings();
  }
  used_.push_back(slot.get());
  return *slot;
}

void StatementCache::ResetAll() noexcept {
  // Only the statements handed out since the last call: the others are reset and bound
  // to nothing already.
  for (SQLite::Statement* statement : used_) {
    try {
      statement->reset();
    } catch (const SQLite::Exception&) {
      // reset() reports the error of the last step again; the statement is reset anyway.
    }
    try {
      // Text bound with bindNoCopy points into strings of the call that ends here.
      statement->clearBindings();
    } catch (const SQLite::Exception&) {
      // sqlite3_clear_bindings always answers SQLITE_OK.
    }
  }
  used_.clear();
}

CachedTransaction::CachedTransaction(StatementCache& cache) : cache_(cache) {
  // IMMEDIATE takes the write lock up front: another process writing the same file
  // makes us wait (busy_timeout) now instead of failing at the first write.
  cache_.Get("BEGIN IMMEDIATE").exec();
}

CachedTransaction::~CachedTransaction() {
  if (done_) return;
  try {
    cache_.ResetAll();  // no statement may be mid-step at rollback
    cache_.Get("ROLLBACK").exec();
  } catch (const SQLite::Exception&) {
    // The connection rolls back by itself when a statement failed hard; nothing to add.
  }
}

void CachedTransaction::Commit() {
  cache_.ResetAll();
  cache_.Get("COMMIT").exec();
  done_ = true;
}

Status InsertSession(StatementCache& db, const SessionRecord& session, const std::string& state, int turn_count) {
  // One statement: an existing id inserts nothing rather than being looked up first.
  SQLite::Statement& q = db.Get("INSERT INTO sessions (id, tenant, created_at, metadata, state, turn_count) "
                                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING");
  const std::string metadata = DumpJson(session.metadata);
  q.bindNoCopy(1, session.id);  // in place: all of it outlives exec() (StatementCache)
  q.bindNoCopy(2, session.tenant);
  q.bind(3, session.created_at_ms);
  q.bindNoCopy(4, metadata);
  q.bindNoCopy(5, state);
  q.bind(6, turn_count);
  if (q.exec() == 0) return Status(StatusCode::kAlreadyExists, "session '" + session.id + "' already exists");
  return {};
}

bool SessionExists(StatementCache& db, const std::string& session_id) {
  SQLite::Statement& q = db.Get("SELECT 1 FROM sessions WHERE id = ?");
  q.bind(1, session_id);
  return q.executeStep();
}

}  // namespace store

namespace {

using store::ColumnJson;
using store::DumpJson;
using store::Guarded;

SessionRecord SessionFromRow(SQLite::Statement& q) {
  SessionRecord s;
  s.id = q.getColumn(0).getString();
  s.tenant = q.getColumn(1).getString();
  s.created_at_ms = q.getColumn(2).getInt64();
  s.metadata = ColumnJson(q.getColumn(3), "the metadata of session '" + s.id + "'");
  s.state = ColumnJson(q.getColumn(4), "the state of session '" + s.id + "'");
  s.turn_count = q.getColumn(5).getInt();
  return s;
}

constexpr const char* kSessionColumns = "SELECT id, tenant, created_at, metadata, state, turn_count FROM sessions";
// The same columns, the newest turn's status, and the first turn's speaker and input,
// each found through the turns' (session, number) key.
constexpr const char* kRecentSessionColumns =
    "SELECT id, tenant, created_at, metadata, state, turn_count, COALESCE((SELECT status FROM turns "
    "WHERE turns.session_id = sessions.id ORDER BY number DESC LIMIT 1), ''), "
    "(SELECT speaker FROM turns WHERE turns.session_id = sessions.id AND number = 1), "
    "(SELECT input FROM turns WHERE turns.session_id = sessions.id AND number = 1) FROM sessions";
constexpr const char* kTurnColumns =
    "SELECT id, number, speaker, status, reply, created_at, input, result, events FROM turns";

StoredTurn TurnFromRow(SQLite::Statement& q) {
  StoredTurn t;
  t.turn_id = q.getColumn(0).getString();
  t.turn_number = q.getColumn(1).getInt();
  t.speaker = q.getColumn(2).getString();
  t.status = q.getColumn(3).getString();
  t.reply = q.getColumn(4).getString();
  t.created_at_ms = q.getColumn(5).getInt64();
  t.input = ColumnJson(q.getColumn(6), "the input of turn '" + t.turn_id + "'");
  t.result = ColumnJson(q.getColumn(7), "the result of turn '" + t.turn_id + "'");
  Result<std::vector<TraceEvent>> events =
      store::ParseStoredEvents(q.getColumn(8).getString(), "the trace events of turn '" + t.turn_id + "'");
  if (!events.ok()) throw store::CorruptRow(events.status().message());
  t.events = std::move(events).value();
  return t;
}

}  // namespace

SqliteStore::SqliteStore(std::unique_ptr<SQLite::Database> db)
    : db_(std::move(db)), statements_(std::make_unique<store::StatementCache>(*db_)) {}
SqliteStore::~SqliteStore() = default;

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path, Durability durability) {
  // SQLite counts the bytes it allocates under a global mutex (two lock round trips per
  // allocation, 135 per turn); nothing here reads the count. Possible only before SQLite
  // initialises: a process that used it first keeps counting, which is slower, not wrong.
  static std::once_flag uncounted;
  std::call_once(uncounted, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  std::unique_ptr<SQLite::Database> db;
  try {
    // The batching VFS writes a commit's log frames in one call (sqlite_wal_batch.h).
    // NOMUTEX: mu_ already makes every use of the connection one at a time, so SQLite's
    // own lock around each call (a hundred per turn) guards nothing.
    db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                            /*busy_timeout_ms=*/5000, store::WalBatchVfs());
  } catch (const SQLite::Exception& e) {
    return Unavailable("cannot open SQLite database '" + path + "': " + e.what());
  }
  Status configured = Guarded("cannot configure SQLite database '" + path + "'", [&]() -> Status {
    // Off by default in SQLite; the schema's REFERENCES clauses mean nothing without it.
    db->exec("PRAGMA foreign_keys = ON");
    // A new database gets 1 KB pages (an existing one keeps its own): a commit writes
    // every page it touches to the log whole and checksums it, and a turn's commit
    // touches about a dozen b-tree pages for a few KB of rows. 1 KB pages cut the
    // served turn's instructions by 5 % (docs/PERFORMANCE.md, round 6); 2 KB and
    // 512-byte pages saved less.
    db->exec("PRAGMA page_size = 1024");
    // The page cache is bounded at 1 MiB, half SQLite's default. A turn's commit works on
    // a few dozen pages at the b-trees' right edges, and a session is read from the store
    // only when it is not in the runtime's own cache; older pages come from the kernel's
    // page cache when read again. Up to the bound the cache grows with the file, so in a
    // server a few minutes old that growth showed as 0.9 KiB of every waiting turn's
    // memory (docs/PERFORMANCE.md, round 21).
    db->exec("PRAGMA cache_size = -1024");
    if (path != ":memory:") {
      // WAL lets readers run beside the writer. A filesystem without shared memory
      // support answers with another mode; that is slower, not wrong, so accept it.
      db->execAndGet("PRAGMA journal_mode = WAL");
      // In WAL mode NORMAL writes each commit to the log before it returns (a killed
      // process loses nothing) and fsyncs at checkpoints; FULL fsyncs every commit,
      // which costs a disk flush per turn.
      db->exec(durability == Durability::kPowerLoss ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
      // A checkpoint (the log copied back into the database file, an fsync before and
      // after) starts once the log holds this many pages: at SQLite's 1,000 (1 MB of
      // 1 KB pages) about every 60 served turns; at 10,000 a log of up to 10 MB is
      // copied ten times as rarely, one fsync pair per 600 turns (docs/PERFORMANCE.md,
      // round 8). The WalCheckpointer copies it on its own thread (Open, below); this
      // setting is SQLite's own checkpoint, inside the commit, for when it cannot.
      db->exec("PRAGMA wal_autocheckpoint = " + std::to_string(kCheckpointPages));
    }
    return {};
  });
  if (!configured.ok()) return configured;
  REINS_RETURN_IF_ERROR(store::ApplyMigrations(*db));
  std::unique_ptr<SqliteStore> opened(new SqliteStore(std::move(db)));
  if (path != ":memory:") {
    // No commit waits for a checkpoint (store/sqlite_checkpointer.h, docs/PERFORMANCE.md
    // round 25). Without one, SQLite checkpoints inside commits, as configured above.
    store::WalCheckpointer::Options checkpoints;
    checkpoints.start_pages = kCheckpointPages;
    checkpoints.max_pages = 4 * kCheckpointPages;
    checkpoints.full_sync = durability == Durability::kPowerLoss;
    opened->checkpointer_ =
        store::WalCheckpointer::Start(opened->db_->getHandle(), opened->mu_, path, store::WalBatchVfs(), checkpoints);
  }
  return opened;
}

Status SqliteStore::CreateSession(const SessionRecord& session) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot create session '" + session.id + "'", [&]() -> Status {
    return store::InsertSession(*statements_, session, DumpJson(session.state), session.turn_count);
  });
}

Result<SessionRecord> SqliteStore::LoadSession(const std::string& session_id) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot load session '" + session_id + "'", [&]() -> Result<SessionRecord> {
    SQLite::Statement& q = statements_->Get(std::string(kSessionColumns) + " WHERE id = ?");
    q.bind(1, session_id);
    if (!q.executeStep()) return store::SessionNotFound(session_id);
    return SessionFromRow(q);
  });
}

Result<std::string> SqliteStore::LoadTenant(const std::string& session_id) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot load session '" + session_id + "'", [&]() -> Result<std::string> {
    SQLite::Statement& q = statements_->Get("SELECT tenant FROM sessions WHERE id = ?");
    q.bind(1, session_id);
    if (!q.executeStep()) return store::SessionNotFound(session_id);
    return q.getColumn(0).getString();
  });
}

Result<std::vector<SessionRecord>> SqliteStore::ListSessions() {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot list sessions", [&]() -> Result<std::vector<SessionRecord>> {
    SQLite::Statement& q = statements_->Get(std::string(kSessionColumns) + " ORDER BY created_at, id");
    std::vector<SessionRecord> out;
    while (q.executeStep()) out.push_back(SessionFromRow(q));
    return out;
  });
}

Result<std::vector<RecentSession>> SqliteStore::RecentSessions(const std::optional<std::string>& tenant, int limit) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot list sessions", [&]() -> Result<std::vector<RecentSession>> {
    const std::string order = " ORDER BY created_at DESC, id DESC LIMIT ?";
    SQLite::Statement& q = tenant ? statements_->Get(std::string(kRecentSessionColumns) + " WHERE tenant = ?" + order)
                                  : statements_->Get(std::string(kRecentSessionColumns) + order);
    int at = 1;
    if (tenant) q.bind(at++, *tenant);
    q.bind(at, limit);
    std::vector<RecentSession> out;
    while (q.executeStep()) {
      RecentSession recent{SessionFromRow(q), q.getColumn(6).getString(), q.getColumn(7).getString(), Json()};
      if (!q.getColumn(8).isNull()) {
        recent.first_input = ColumnJson(q.getColumn(8), "the input of session '" + recent.session.id + "''s first turn");
      }
      out.push_back(std::move(recent));
    }
    return out;
  });
}

Result<int64_t> SqliteStore::CountSessions(std::optional<std::string> tenant) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot count sessions", [&]() -> Result<int64_t> {
    SQLite::Statement& q = tenant ? statements_->Get("SELECT COUNT(*) FROM sessions WHERE tenant = ?")
                                  : statements_->Get("SELECT COUNT(*) FROM sessions");
    if (tenant) q.bind(1, *tenant);
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

Result<std::vector<Message>> SqliteStore::LoadMessages(const std::string& session_id, TurnRange range) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot load the messages of session '" + session_id + "'",
                 [&]() -> Result<std::vector<Message>> {
    if (!store::SessionExists(*statements_, session_id)) return store::SessionNotFound(session_id);
    SQLite::Statement& q = statements_->Get(
        "SELECT number, messages FROM turns WHERE session_id = ? AND number > ? ORDER BY number LIMIT ?");
    q.bind(1, session_id);
    q.bind(2, range.after);
    q.bind(3, range.limit);
    std::vector<Message> out;
    while (q.executeStep()) {
      REINS_RETURN_IF_ERROR(store::AppendStoredMessages(q.getColumn(1).getString(), q.getColumn(0).getInt64(),
                                                        session_id, out));
    }
    return out;
  });
}

Result<std::vector<StoredTurn>> SqliteStore::LoadTurns(const std::string& session_id, TurnRange range) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot load the turns of session '" + session_id + "'",
                 [&]() -> Result<std::vector<StoredTurn>> {
    if (!store::SessionExists(*statements_, session_id)) return store::SessionNotFound(session_id);
    SQLite::Statement& q = statements_->Get(std::string(kTurnColumns) +
                                            " WHERE session_id = ? AND number > ? ORDER BY number LIMIT ?");
    q.bind(1, session_id);
    q.bind(2, range.after);
    q.bind(3, range.limit);
    std::vector<StoredTurn> out;
    while (q.executeStep()) out.push_back(TurnFromRow(q));
    return out;
  });
}

Result<std::optional<StoredTurn>> SqliteStore::FindTurnByKey(const std::string& session_id,
                                                             const std::string& idempotency_key) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot look up idempotency key '" + idempotency_key + "'",
                 [&]() -> Result<std::optional<StoredTurn>> {
    SQLite::Statement& q =
        statements_->Get(std::string(kTurnColumns) + " WHERE session_id = ? AND idempotency_key = ?");
    q.bind(1, session_id);
    q.bind(2, idempotency_key);
    if (!q.executeStep()) return std::optional<StoredTurn>();
    return std::optional<StoredTurn>(TurnFromRow(q));
  });
}

Status SqliteStore::LinkConversation(const std::string& tenant, const std::string& digest,
                                     const std::string& session_id, int64_t at_ms) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot link a conversation to session '" + session_id + "'", [&]() -> Status {
    if (!store::SessionExists(*statements_, session_id)) return store::SessionNotFound(session_id);
    SQLite::Statement& q = statements_->Get(
        "INSERT INTO conversations (tenant, digest, session_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING");
    q.bind(1, tenant);
    q.bind(2, digest);
    q.bind(3, session_id);
    q.bind(4, at_ms);
    q.exec();
    return {};
  });
}

Result<std::vector<std::string>> SqliteStore::FindConversation(const std::string& tenant, const std::string& digest,
                                                               int limit) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot look up a conversation", [&]() -> Result<std::vector<std::string>> {
    SQLite::Statement& q = statements_->Get(
        "SELECT session_id FROM conversations WHERE tenant = ? AND digest = ? ORDER BY created_at, session_id LIMIT ?");
    q.bind(1, tenant);
    q.bind(2, digest);
    q.bind(3, limit);
    std::vector<std::string> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  });
}

Result<std::vector<StoredInvocation>> SqliteStore::LoadInvocations(const std::string& session_id, TurnRange range) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot load the tool invocations of session '" + session_id + "'",
                 [&]() -> Result<std::vector<StoredInvocation>> {
    if (!store::SessionExists(*statements_, session_id)) return store::SessionNotFound(session_id);
    SQLite::Statement& q = statements_->Get("SELECT i.turn_id, i.response_index, i.position, i.name, i.args, i.status, i.reason, "
                        "i.success, i.next_action, i.result, i.latency_ms, i.deferred "
                        "FROM tool_invocations i JOIN turns t ON t.id = i.turn_id "
                        "WHERE i.session_id = ? AND t.number > ? AND t.number - ? <= ? "
                        "ORDER BY t.number, i.response_index, i.position, i.id");
    q.bind(1, session_id);
    q.bind(2, range.after);
    q.bind(3, range.after);  // t.number - after <= limit, without overflowing after + limit
    q.bind(4, range.limit);
    std::vector<StoredInvocation> out;
    while (q.executeStep()) {
      StoredInvocation v;
      v.turn_id = q.getColumn(0).getString();
      v.response_index = q.getColumn(1).getInt();
      v.position = q.getColumn(2).getInt();
      v.name = q.getColumn(3).getString();
      const std::string where = "tool call '" + v.name + "' of turn '" + v.turn_id + "'";
      v.args = ColumnJson(q.getColumn(4), "the arguments of " + where);
      v.status = q.getColumn(5).getString();
      v.reason = q.getColumn(6).getString();
      if (!q.getColumn(7).isNull()) v.success = q.getColumn(7).getInt() != 0;
      v.next_action = q.getColumn(8).getString();  // NULL reads as ""
      v.result = ColumnJson(q.getColumn(9), "the result of " + where);
      v.latency_ms = q.getColumn(10).getInt64();
      v.deferred = q.getColumn(11).getInt() != 0;
      out.push_back(std::move(v));
    }
    return out;
  });
}

}  // namespace reins

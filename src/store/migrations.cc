#include "store/migrations.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <array>
#include <optional>
#include <string>

namespace reins::store {
namespace {

// Step 1: the initial schema. JSON columns hold nlohmann dumps; times are Unix ms.
constexpr const char* kV1 = R"sql(
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  state TEXT NOT NULL,
  turn_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_created ON sessions(created_at);

CREATE TABLE turns (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  number INTEGER NOT NULL,
  speaker TEXT NOT NULL,
  status TEXT NOT NULL,
  reply TEXT NOT NULL,
  input TEXT NOT NULL,
  result TEXT NOT NULL,
  error TEXT NOT NULL,
  events TEXT NOT NULL,   -- the turn's trace events, a JSON array, in order
  created_at INTEGER NOT NULL,
  UNIQUE(session_id, number)
);

CREATE TABLE messages (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  seq INTEGER NOT NULL,
  turn_id TEXT NOT NULL REFERENCES turns(id),
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  PRIMARY KEY(session_id, seq)
);

CREATE TABLE tool_invocations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  response_index INTEGER NOT NULL,
  position INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('executed', 'deferred', 'rejected', 'skipped')),
  reason TEXT NOT NULL,
  success INTEGER,
  next_action TEXT,
  result TEXT,
  latency_ms INTEGER NOT NULL,
  deferred INTEGER NOT NULL CHECK (deferred IN (0, 1)),
  message TEXT NOT NULL
);
CREATE INDEX tool_invocations_by_session ON tool_invocations(session_id);
CREATE INDEX tool_invocations_by_turn ON tool_invocations(turn_id);

CREATE TABLE clarifications (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  type TEXT NOT NULL,
  question TEXT NOT NULL,
  request_text TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'superseded')),
  chosen_option TEXT
);
CREATE INDEX clarifications_by_session ON clarifications(session_id, status);

CREATE TABLE clarification_options (
  clarification_id TEXT NOT NULL REFERENCES clarifications(id),
  position INTEGER NOT NULL,
  option_id TEXT NOT NULL,
  title TEXT NOT NULL,
  subtitle TEXT NOT NULL,
  confidence REAL,
  metadata TEXT,
  PRIMARY KEY(clarification_id, position)
);

)sql";

// v2: the deferred-call outbox (I12) and notices for the next reply.
constexpr const char* kV2 = R"sql(
CREATE TABLE outbox (
  key TEXT PRIMARY KEY,              -- idempotency key: turn id + response + call position
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('await', 'background')),
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done')),
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,                        -- the envelope of the last attempt
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX outbox_unfinished ON outbox(status) WHERE status <> 'done';
CREATE INDEX outbox_by_session ON outbox(session_id);

CREATE TABLE notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL,              -- the turn whose deferred call failed
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  delivered_turn_id TEXT              -- the turn whose reply carried it, NULL until then
);
CREATE INDEX notices_undelivered ON notices(session_id) WHERE delivered_turn_id IS NULL;

ALTER TABLE tool_invocations ADD COLUMN idempotency_key TEXT;
CREATE INDEX tool_invocations_by_key ON tool_invocations(idempotency_key) WHERE idempotency_key IS NOT NULL;
)sql";

// v3: floor leases (I6). One row per session once it ever had a lease; `version`
// grows with every change, so writers can compare-and-set across replicas.
constexpr const char* kV3 = R"sql(
CREATE TABLE leases (
  session_id TEXT PRIMARY KEY REFERENCES sessions(id),
  owner TEXT NOT NULL,                -- '' when released
  domain TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  version INTEGER NOT NULL
);
)sql";

// v4: a turn's messages live in its row, a JSON array in order: they are always
// written and read together, and one row per message cost more than the rest of the
// turn's commit. Existing messages move over in order.
constexpr const char* kV4 = R"sql(
ALTER TABLE turns ADD COLUMN messages TEXT NOT NULL DEFAULT '[]';
UPDATE turns SET messages = (
  SELECT COALESCE(json_group_array(json(content)), '[]')
  FROM (SELECT content FROM messages m WHERE m.turn_id = turns.id ORDER BY m.seq));
DROP TABLE messages;
)sql";

// v5: approvals (I8): the paused call, and who decided what, when.
constexpr const char* kV5 = R"sql(
CREATE TABLE approvals (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'granted', 'denied', 'cancelled')),
  decided_by TEXT,
  decided_turn_id TEXT,
  decided_at INTEGER
);
CREATE INDEX approvals_by_session ON approvals(session_id, status);
)sql";

// v6: idempotency keys are unique per session and found by index (a retried request
// no longer reads the whole session); sessions are counted per tenant (quotas).
constexpr const char* kV6 = R"sql(
ALTER TABLE turns ADD COLUMN idempotency_key TEXT;
UPDATE turns SET idempotency_key = json_extract(input, '$.idempotency_key')
  WHERE json_extract(input, '$.idempotency_key') IS NOT NULL;
CREATE UNIQUE INDEX turns_by_idempotency_key ON turns(session_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX sessions_by_tenant ON sessions(tenant);
)sql";

// v7: a deferred write queued inside a plan step remembers the step: its failure note
// names the step, and the step's record shows the write's outcome (I7).
constexpr const char* kV7 = R"sql(
ALTER TABLE outbox ADD COLUMN step_id TEXT NOT NULL DEFAULT '';
)sql";

// v8: fewer b-trees written per turn (each one a whole page in the log, in every commit that
// touches it). Tool invocations lose AUTOINCREMENT (its sqlite_sequence row was
// rewritten with every insert; rows are never deleted, so a plain rowid still grows)
// and the index by turn, which no query used (invocations are read by session).
constexpr const char* kV8 = R"sql(
CREATE TABLE tool_invocations_v8 (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  response_index INTEGER NOT NULL,
  position INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('executed', 'deferred', 'rejected', 'skipped')),
  reason TEXT NOT NULL,
  success INTEGER,
  next_action TEXT,
  result TEXT,
  latency_ms INTEGER NOT NULL,
  deferred INTEGER NOT NULL CHECK (deferred IN (0, 1)),
  message TEXT NOT NULL,
  idempotency_key TEXT
);
INSERT INTO tool_invocations_v8 (id, session_id, turn_id, response_index, position, call_id, name, args, status,
    reason, success, next_action, result, latency_ms, deferred, message, idempotency_key)
  SELECT id, session_id, turn_id, response_index, position, call_id, name, args, status,
    reason, success, next_action, result, latency_ms, deferred, message, idempotency_key
  FROM tool_invocations ORDER BY id;
DROP TABLE tool_invocations;
ALTER TABLE tool_invocations_v8 RENAME TO tool_invocations;
DELETE FROM sqlite_sequence WHERE name = 'tool_invocations';
CREATE INDEX tool_invocations_by_session ON tool_invocations(session_id);
CREATE INDEX tool_invocations_by_key ON tool_invocations(idempotency_key) WHERE idempotency_key IS NOT NULL;
)sql";

// v9: one b-tree fewer per session created. Sessions are listed in creation order only
// by `reins trace`, which reads them all anyway; the sort is done when listing.
constexpr const char* kV9 = R"sql(
DROP INDEX IF EXISTS sessions_by_created;
)sql";

// v10: streamed replies (I12). A turn whose reply streams writes its deferred calls
// before its first delta, as `staged`, while the turn row does not exist yet: the
// outbox keeps the turn's id without a foreign key (a turn that never committed, a
// crash mid-stream, still leaves its staged writes for recovery to run).
constexpr const char* kV10 = R"sql(
CREATE TABLE outbox_v10 (
  key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('await', 'background')),
  status TEXT NOT NULL CHECK (status IN ('staged', 'pending', 'running', 'done')),
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  step_id TEXT NOT NULL DEFAULT ''
);
INSERT INTO outbox_v10 SELECT key, session_id, turn_id, tool, args, mode, status, attempts, result, created_at,
  updated_at, step_id FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_v10 RENAME TO outbox;
CREATE INDEX outbox_unfinished ON outbox(status) WHERE status <> 'done';
CREATE INDEX outbox_by_session ON outbox(session_id);
)sql";

// v11: the OpenAI-compatible endpoint. A client that resends its whole history finds
// its session by a digest of that history (Store::LinkConversation).
constexpr const char* kV11 = R"sql(
CREATE TABLE conversations (
  tenant TEXT NOT NULL,
  digest TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, digest, session_id)
);
)sql";

// v12: no list of three or more values in a CHECK. SQLite evaluates `x IN (a, b, c)` by
// building a temporary b-tree of the list (it compares one by one only up to two), on
// every row it checks: tool_invocations.status did so in every turn's commit, about 6 %
// of an embedded turn's instructions (docs/PERFORMANCE.md, round 9). The same checks as
// comparisons; SQLite cannot alter a constraint, so the four tables are rebuilt (with
// foreign keys off: clarification_options refers to clarifications).
constexpr const char* kV12 = R"sql(
CREATE TABLE tool_invocations_v12 (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  response_index INTEGER NOT NULL,
  position INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status = 'executed' OR status = 'deferred' OR status = 'rejected' OR status = 'skipped'),
  reason TEXT NOT NULL,
  success INTEGER,
  next_action TEXT,
  result TEXT,
  latency_ms INTEGER NOT NULL,
  deferred INTEGER NOT NULL CHECK (deferred IN (0, 1)),
  message TEXT NOT NULL,
  idempotency_key TEXT
);
INSERT INTO tool_invocations_v12 (id, session_id, turn_id, response_index, position, call_id, name, args, status,
    reason, success, next_action, result, latency_ms, deferred, message, idempotency_key)
  SELECT id, session_id, turn_id, response_index, position, call_id, name, args, status,
    reason, success, next_action, result, latency_ms, deferred, message, idempotency_key
  FROM tool_invocations ORDER BY id;
DROP TABLE tool_invocations;
ALTER TABLE tool_invocations_v12 RENAME TO tool_invocations;
CREATE INDEX tool_invocations_by_session ON tool_invocations(session_id);
CREATE INDEX tool_invocations_by_key ON tool_invocations(idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE outbox_v12 (
  key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('await', 'background')),
  status TEXT NOT NULL CHECK (status = 'staged' OR status = 'pending' OR status = 'running' OR status = 'done'),
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  step_id TEXT NOT NULL DEFAULT ''
);
INSERT INTO outbox_v12 (key, session_id, turn_id, tool, args, mode, status, attempts, result, created_at, updated_at,
    step_id)
  SELECT key, session_id, turn_id, tool, args, mode, status, attempts, result, created_at, updated_at, step_id
  FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_v12 RENAME TO outbox;
CREATE INDEX outbox_unfinished ON outbox(status) WHERE status <> 'done';
CREATE INDEX outbox_by_session ON outbox(session_id);

CREATE TABLE approvals_v12 (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status = 'pending' OR status = 'granted' OR status = 'denied' OR status = 'cancelled'),
  decided_by TEXT,
  decided_turn_id TEXT,
  decided_at INTEGER
);
INSERT INTO approvals_v12 (id, session_id, turn_id, tool, args, status, decided_by, decided_turn_id, decided_at)
  SELECT id, session_id, turn_id, tool, args, status, decided_by, decided_turn_id, decided_at FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v12 RENAME TO approvals;
CREATE INDEX approvals_by_session ON approvals(session_id, status);

CREATE TABLE clarifications_v12 (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  type TEXT NOT NULL,
  question TEXT NOT NULL,
  request_text TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status = 'pending' OR status = 'answered' OR status = 'superseded'),
  chosen_option TEXT
);
INSERT INTO clarifications_v12 (id, session_id, turn_id, tool, entity_type, type, question, request_text, status,
    chosen_option)
  SELECT id, session_id, turn_id, tool, entity_type, type, question, request_text, status, chosen_option
  FROM clarifications;
DROP TABLE clarifications;
ALTER TABLE clarifications_v12 RENAME TO clarifications;
CREATE INDEX clarifications_by_session ON clarifications(session_id, status);
)sql";

// v13: approvals that lapse (approval.ttl_s), and what a decision said: the edited
// arguments it approved, the person's message. SQLite cannot change a CHECK in place;
// no table refers to approvals, so it is rebuilt with foreign keys on. The CHECK is
// written as v12 writes them (no IN list).
constexpr const char* kV13 = R"sql(
CREATE TABLE approvals_v13 (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status = 'pending' OR status = 'granted' OR status = 'denied' OR status = 'cancelled'
                              OR status = 'lapsed'),
  decided_by TEXT,
  decided_turn_id TEXT,
  decided_at INTEGER,
  approved_args TEXT,
  message TEXT
);
INSERT INTO approvals_v13 (id, session_id, turn_id, tool, args, status, decided_by, decided_turn_id, decided_at)
  SELECT id, session_id, turn_id, tool, args, status, decided_by, decided_turn_id, decided_at FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v13 RENAME TO approvals;
CREATE INDEX approvals_by_session ON approvals(session_id, status);
)sql";

// v14: the write-ahead record of immediate writes (WriteRecord, pipeline/write_ledger.h):
// a row before the call runs, its outcome once it returns. No foreign key: the first
// turn of a session may run its writes before the turn (and its session) is committed.
// WITHOUT ROWID: the key is the table's one B-tree, so each of a write's two commits
// logs its leaf page and no separate index's.
constexpr const char* kV14 = R"sql(
CREATE TABLE writes (
  session_id TEXT NOT NULL,
  write_key TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state = 'running' OR state = 'succeeded' OR state = 'failed' OR state = 'uncertain'),
  result TEXT,
  attempts INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  PRIMARY KEY (session_id, write_key)
) WITHOUT ROWID;
)sql";

struct Step {
  const char* sql;
  // The step drops and recreates a table that other tables refer to. SQLite's way
  // ("making other kinds of table schema changes", in its ALTER TABLE page): foreign
  // keys off for the step (the drop would otherwise fail on the children's rows, or
  // cascade), and checked before it commits.
  bool rebuilds_a_parent = false;
};

// Append new steps here; never edit one that has shipped.
constexpr std::array kSteps = {Step{kV1}, Step{kV2}, Step{kV3}, Step{kV4},  Step{kV5},  Step{kV6},
                               Step{kV7}, Step{kV8}, Step{kV9}, Step{kV10}, Step{kV11},
                               Step{kV12, /*rebuilds_a_parent=*/true}, Step{kV13}, Step{kV14}};

// Runs a step that rebuilds a parent table with foreign keys off, and puts them back
// as they were, whatever happens. The pragma is a no-op inside a transaction: this
// wraps the step's.
class ForeignKeysOff {
 public:
  explicit ForeignKeysOff(SQLite::Database& db) : db_(db), was_on_(db.execAndGet("PRAGMA foreign_keys").getInt() != 0) {
    db_.exec("PRAGMA foreign_keys = OFF");
  }
  ~ForeignKeysOff() {
    try {
      if (was_on_) db_.exec("PRAGMA foreign_keys = ON");
    } catch (const SQLite::Exception&) {
      // Setting the pragma outside a transaction does not fail on an open connection; a
      // destructor has nowhere to report it if it did.
    }
  }
  ForeignKeysOff(const ForeignKeysOff&) = delete;
  ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;

 private:
  SQLite::Database& db_;
  bool was_on_;
};

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(kSteps.size()); }

Status ApplyMigrations(SQLite::Database& db) {
  const int latest = LatestSchemaVersion();
  try {
    int version = db.execAndGet("PRAGMA user_version").getInt();
    if (version > latest) {
      return FailedPrecondition("database schema version " + std::to_string(version) +
                                " is newer than this reins (" + std::to_string(latest) +
                                "); upgrade reins");
    }
    for (; version < latest; ++version) {
      const Step& step = kSteps[static_cast<size_t>(version)];
      std::optional<ForeignKeysOff> keys_off;
      if (step.rebuilds_a_parent) keys_off.emplace(db);
      // user_version lives in the database header, which is transactional: the step
      // and its version number commit together or not at all.
      SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
      db.exec(step.sql);
      if (step.rebuilds_a_parent && SQLite::Statement(db, "PRAGMA foreign_key_check").executeStep()) {
        return Internal("cannot migrate the store schema to version " + std::to_string(version + 1) +
                        ": a row refers to one that does not exist (PRAGMA foreign_key_check lists them)");
      }
      db.exec("PRAGMA user_version = " + std::to_string(version + 1));
      tx.commit();
    }
  } catch (const SQLite::Exception& e) {
    return Internal(std::string("cannot migrate the store schema: ") + e.what());
  }
  return {};
}

}  // namespace reins::store

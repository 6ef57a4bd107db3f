// Versioned migrations for the PostgreSQL store: the same scheme as the SQLite one
// (an append-only list of steps, each in its own transaction with its version number),
// in PostgreSQL's dialect. Several replicas starting together take an advisory lock,
// so exactly one applies each step and the others find it done.
//
// PostgreSQL support arrived with SQLite's schema at version 7, so its step 1 is that
// whole schema; later changes add a step to both lists (steps 2 and 3, the relay of
// large session events and of MCP questions between replicas, are PostgreSQL's alone).
#include "store/pg_migrations.h"

#include <array>
#include <string>

namespace reins::store::pg {
namespace {

// JSON columns are TEXT holding the same compact dumps as SQLite's (they are parsed in
// C++, never queried in SQL); times are Unix ms.
constexpr const char* kV1 = R"sql(
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  metadata TEXT NOT NULL,
  state TEXT NOT NULL,
  turn_count INTEGER NOT NULL DEFAULT 0,
  -- The replica running a turn of the session (PostgresStore::ClaimSession): its
  -- token fences that turn's commit; the claim lapses at claim_until (the server's
  -- clock, Unix ms) if the replica died.
  claim_owner TEXT,
  claim_token BIGINT NOT NULL DEFAULT 0,
  claim_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_created ON sessions(created_at);
CREATE INDEX sessions_by_tenant ON sessions(tenant);

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
  events TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  messages TEXT NOT NULL DEFAULT '[]',
  idempotency_key TEXT,
  UNIQUE(session_id, number)
);
CREATE UNIQUE INDEX turns_by_idempotency_key ON turns(session_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

CREATE TABLE tool_invocations (
  id BIGSERIAL PRIMARY KEY,
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
  latency_ms BIGINT NOT NULL,
  deferred INTEGER NOT NULL CHECK (deferred IN (0, 1)),
  message TEXT NOT NULL,
  idempotency_key TEXT
);
CREATE INDEX tool_invocations_by_session ON tool_invocations(session_id);
CREATE INDEX tool_invocations_by_turn ON tool_invocations(turn_id);
CREATE INDEX tool_invocations_by_key ON tool_invocations(idempotency_key) WHERE idempotency_key IS NOT NULL;

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
  confidence DOUBLE PRECISION,
  metadata TEXT,
  PRIMARY KEY(clarification_id, position)
);

CREATE TABLE outbox (
  key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('await', 'background')),
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done')),
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  step_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX outbox_unfinished ON outbox(status) WHERE status <> 'done';
CREATE INDEX outbox_by_session ON outbox(session_id);

CREATE TABLE notices (
  id BIGSERIAL PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  delivered_turn_id TEXT
);
CREATE INDEX notices_undelivered ON notices(session_id) WHERE delivered_turn_id IS NULL;

CREATE TABLE leases (
  session_id TEXT PRIMARY KEY REFERENCES sessions(id),
  owner TEXT NOT NULL,
  domain TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  version BIGINT NOT NULL
);

CREATE TABLE approvals (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  turn_id TEXT NOT NULL REFERENCES turns(id),
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'granted', 'denied', 'cancelled')),
  decided_by TEXT,
  decided_turn_id TEXT,
  decided_at BIGINT
);
CREATE INDEX approvals_by_session ON approvals(session_id, status);
)sql";

// Session events too large for one NOTIFY payload (8,000 bytes) wait here for the
// other replicas to read them (pg_event_relay.cc); rows older than a minute go.
constexpr const char* kV2 = R"sql(
CREATE TABLE relayed_events (
  id BIGSERIAL PRIMARY KEY,
  created_at BIGINT NOT NULL,
  payload TEXT NOT NULL
);
)sql";

// MCP questions held open by one replica and the mail other replicas send it
// (postgres_mail.cc, host/mcp_relay.h).
constexpr const char* kV3 = R"sql(
CREATE TABLE mcp_questions (
  session_id TEXT PRIMARY KEY,
  replica TEXT NOT NULL,
  asked_at BIGINT NOT NULL
);
CREATE TABLE replica_mail (
  id BIGSERIAL PRIMARY KEY,
  recipient TEXT NOT NULL,
  stage TEXT NOT NULL DEFAULT 'unread',
  body TEXT NOT NULL,
  reply TEXT,
  sent_at BIGINT NOT NULL
);
CREATE INDEX replica_mail_unread ON replica_mail(recipient) WHERE stage = 'unread';
)sql";

// v4: the two indexes the SQLite store dropped in its v8 and v9, for the same reasons:
// no query reads invocations by turn, and only `reins trace` lists sessions in creation
// order, reading them all. Each was one more index entry written per call or session.
constexpr const char* kV4 = R"sql(
DROP INDEX IF EXISTS tool_invocations_by_turn;
DROP INDEX IF EXISTS sessions_by_created;
)sql";

// v5: streamed replies (I12), as the SQLite store's v10: deferred calls written before
// the turn that queued them (`staged`), so the outbox no longer points at turns by key.
constexpr const char* kV5 = R"sql(
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_turn_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_status_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_status_check CHECK (status IN ('staged', 'pending', 'running', 'done'));
)sql";

// v6: the OpenAI-compatible endpoint's conversations (as SQLite's v11).
constexpr const char* kV6 = R"sql(
CREATE TABLE conversations (
  tenant TEXT NOT NULL,
  digest TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  created_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, digest, session_id)
);
)sql";

// v7: approvals that lapse (approval.ttl_s), and what a decision said: the edited
// arguments it approved, the person's message (as SQLite's v13).
constexpr const char* kV7 = R"sql(
ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_status_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
  CHECK (status IN ('pending', 'granted', 'denied', 'cancelled', 'lapsed'));
ALTER TABLE approvals ADD COLUMN approved_args TEXT, ADD COLUMN message TEXT;
)sql";

// v8: the write-ahead record of immediate writes (as SQLite's v14).
constexpr const char* kV8 = R"sql(
CREATE TABLE writes (
  session_id TEXT NOT NULL,
  write_key TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'uncertain')),
  result TEXT,
  attempts INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  finished_at BIGINT,
  PRIMARY KEY (session_id, write_key)
);
)sql";

// v9: a guard a commit's statement raises when the write it guards touched no row (a
// turn whose claim lapsed), so that a group commit's pipeline, which cannot check a
// row count before its sync commits, rolls that turn back (postgres_commit.cc). Its
// SQLSTATE, RN001, is reins' own: Connection reads it as Aborted with this message.
constexpr const char* kV9 = R"sql(
CREATE FUNCTION reins_expect_row(touched BIGINT, why TEXT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN
  IF touched <> 1 THEN
    RAISE EXCEPTION USING ERRCODE = 'RN001', MESSAGE = why;
  END IF;
  RETURN touched;
END $$;
)sql";

// Append new steps here; never edit one that has shipped.
constexpr std::array kSteps = {kV1, kV2, kV3, kV4, kV5, kV6, kV7, kV8, kV9};

// pg_advisory_lock's key: "reins" in ASCII, shared by every replica of every version.
constexpr const char* kLockKey = "435728295283";

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(kSteps.size()); }

Status ApplyMigrations(Connection& conn) {
  const std::string what = "cannot migrate the PostgreSQL store schema";
  REINS_RETURN_IF_ERROR(conn.Run(std::string("SELECT pg_advisory_lock(") + kLockKey + ")", what));
  auto migrate = [&]() -> Status {
    REINS_RETURN_IF_ERROR(conn.Run("CREATE TABLE IF NOT EXISTS reins_schema (version INTEGER NOT NULL)", what));
    REINS_ASSIGN_OR_RETURN(Rows current, conn.Exec("SELECT COALESCE(MAX(version), 0) FROM reins_schema", {}, what));
    int version = static_cast<int>(current.Int(0, 0));
    const int latest = LatestSchemaVersion();
    if (version > latest) {
      return FailedPrecondition("database schema version " + std::to_string(version) + " is newer than this reins (" +
                                std::to_string(latest) + "); upgrade reins");
    }
    for (; version < latest; ++version) {
      // DDL is transactional in PostgreSQL: a step and its version commit together.
      Transaction tx(conn, what);
      REINS_RETURN_IF_ERROR(tx.begun());
      REINS_RETURN_IF_ERROR(conn.Run(kSteps[static_cast<size_t>(version)], what));
      REINS_RETURN_IF_ERROR(conn.Exec("INSERT INTO reins_schema (version) VALUES ($1)", {Int(version + 1)}, what));
      REINS_RETURN_IF_ERROR(tx.Commit());
    }
    return {};
  };
  Status migrated = migrate();
  Status unlocked = conn.Run(std::string("SELECT pg_advisory_unlock(") + kLockKey + ")", what);
  return migrated.ok() ? unlocked : migrated;
}

}  // namespace reins::store::pg

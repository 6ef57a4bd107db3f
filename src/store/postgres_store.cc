#include "store/postgres_store.h"

#include <utility>

#include "store/pg_connection.h"
#include "store/pg_event_relay.h"
#include "store/pg_migrations.h"
#include "store/pg_store_rows.h"
#include "store/row_json.h"

namespace reins {
namespace {

using store::pg::Connection;
using store::pg::Int;
using store::pg::Rows;
using store::pg::Text;

constexpr const char* kSessionColumns = "SELECT id, tenant, created_at, metadata, state, turn_count FROM sessions";
// The same columns, the newest turn's status, and the first turn's speaker and input,
// each found through the turns' (session, number) key.
constexpr const char* kRecentSessionColumns =
    "SELECT id, tenant, created_at, metadata, state, turn_count, COALESCE((SELECT status FROM turns "
    "WHERE turns.session_id = sessions.id ORDER BY number DESC LIMIT 1), ''), "
    "(SELECT speaker FROM turns WHERE turns.session_id = sessions.id AND number = 1), "
    "(SELECT input FROM turns WHERE turns.session_id = sessions.id AND number = 1) FROM sessions";

Result<SessionRecord> SessionFromRow(const Rows& r, int i) {
  SessionRecord s;
  s.id = r.Str(i, 0);
  s.tenant = r.Str(i, 1);
  s.created_at_ms = r.Int(i, 2);
  REINS_ASSIGN_OR_RETURN(s.metadata, store::ParseStoredJson(r.Str(i, 3), "the metadata of session '" + s.id + "'"));
  REINS_ASSIGN_OR_RETURN(s.state, store::ParseStoredJson(r.Str(i, 4), "the state of session '" + s.id + "'"));
  s.turn_count = static_cast<int>(r.Int(i, 5));
  return s;
}

}  // namespace

namespace store::pg {

std::vector<Param> OutboxRowParams(const std::string& key, const std::string& session_id, const std::string& turn_id,
                                   const std::string& tool, const Json& args, DeferredMode mode, int64_t at_ms,
                                   const std::string& step_id) {
  return {Text(key), Text(session_id), Text(turn_id), Text(tool), Text(store::DumpJson(args)), Text(kDeferredModes.Name(mode)),
          Int(at_ms), Text(step_id)};
}

Status InsertSession(Connection& c, const SessionRecord& session, const std::string& state, int turn_count) {
  Result<Rows> inserted = c.Exec(
      "INSERT INTO sessions (id, tenant, created_at, metadata, state, turn_count) VALUES ($1, $2, $3, $4, $5, $6)",
      {Text(session.id), Text(session.tenant), Int(session.created_at_ms), Text(store::DumpJson(session.metadata)),
       Text(state), Int(turn_count)},
      "cannot create session '" + session.id + "'");
  if (inserted.status().code() == StatusCode::kAlreadyExists) {
    return Status(StatusCode::kAlreadyExists, "session '" + session.id + "' already exists");
  }
  return inserted.status();
}

Result<bool> SessionExists(Connection& c, const std::string& session_id) {
  REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT 1 FROM sessions WHERE id = $1", {Text(session_id)},
                                        "cannot look up session '" + session_id + "'"));
  return r.size() > 0;
}

Result<StoredTurn> TurnFromRow(const Rows& r, int i) {
  StoredTurn t;
  t.turn_id = r.Str(i, 0);
  t.turn_number = static_cast<int>(r.Int(i, 1));
  t.speaker = r.Str(i, 2);
  t.status = r.Str(i, 3);
  t.reply = r.Str(i, 4);
  t.created_at_ms = r.Int(i, 5);
  const std::string of = " of turn '" + t.turn_id + "'";
  REINS_ASSIGN_OR_RETURN(t.input, ParseStoredJson(r.Str(i, 6), "the input" + of));
  REINS_ASSIGN_OR_RETURN(t.result, ParseStoredJson(r.Str(i, 7), "the result" + of));
  REINS_ASSIGN_OR_RETURN(t.events, ParseStoredEvents(r.Str(i, 8), "the trace events" + of));
  return t;
}

}  // namespace store::pg

PostgresStore::PostgresStore(std::unique_ptr<store::pg::Pool> pool) : pool_(std::move(pool)) {}
PostgresStore::~PostgresStore() = default;

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url) {
  REINS_ASSIGN_OR_RETURN(auto parsed, store::pg::ParseStoreUrl(url));
  auto pool = std::make_unique<store::pg::Pool>(parsed.first, parsed.second);
  {
    REINS_ASSIGN_OR_RETURN(store::pg::Pool::Lent conn, pool->Acquire());
    REINS_RETURN_IF_ERROR(store::pg::ApplyMigrations(*conn));
  }
  return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(pool)));
}

int PostgresStore::concurrent_calls() const { return pool_->options().pool_size; }

Result<std::unique_ptr<EventRelay>> PostgresStore::RelayEvents(PeerEventHandler on_peer_event) {
  return std::unique_ptr<EventRelay>(
      std::make_unique<store::pg::EventRelay>(pool_->url(), pool_->options(), std::move(on_peer_event)));
}

Status PostgresStore::Call(const std::function<Status(Connection&)>& body) {
  for (int attempt = 0;; ++attempt) {
    REINS_ASSIGN_OR_RETURN(store::pg::Pool::Lent conn, pool_->Acquire());
    Status status = body(*conn);
    const bool died_idle = !status.ok() && !conn->ok() && conn->untouched();
    if (!died_idle || attempt > 0) return status;
  }
}

Status PostgresStore::CreateSession(const SessionRecord& session) {
  return Call([&](Connection& c) -> Status {
    return store::pg::InsertSession(c, session, store::DumpJson(session.state), session.turn_count);
  });
}

Result<SessionRecord> PostgresStore::LoadSession(const std::string& session_id) {
  Result<SessionRecord> out = store::SessionNotFound(session_id);
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(kSessionColumns) + " WHERE id = $1", {Text(session_id)},
                                          "cannot load session '" + session_id + "'"));
    if (r.size() == 0) return store::SessionNotFound(session_id);
    out = SessionFromRow(r, 0);
    return {};
  }));
  return out;
}

Result<std::string> PostgresStore::LoadTenant(const std::string& session_id) {
  std::string tenant;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT tenant FROM sessions WHERE id = $1", {Text(session_id)},
                                          "cannot load session '" + session_id + "'"));
    if (r.size() == 0) return store::SessionNotFound(session_id);
    tenant = r.Str(0, 0);
    return {};
  }));
  return tenant;
}

Result<std::vector<SessionRecord>> PostgresStore::ListSessions() {
  std::vector<SessionRecord> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(kSessionColumns) + " ORDER BY created_at, id", {},
                                          "cannot list sessions"));
    out.clear();
    for (int i = 0; i < r.size(); ++i) {
      REINS_ASSIGN_OR_RETURN(SessionRecord s, SessionFromRow(r, i));
      out.push_back(std::move(s));
    }
    return {};
  }));
  return out;
}

Result<std::vector<RecentSession>> PostgresStore::RecentSessions(const std::optional<std::string>& tenant, int limit) {
  std::vector<RecentSession> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    const std::string order = " ORDER BY created_at DESC, id DESC LIMIT ";
    Result<Rows> r = tenant ? c.Exec(std::string(kRecentSessionColumns) + " WHERE tenant = $1" + order + "$2",
                                     {Text(*tenant), Int(limit)}, "cannot list sessions")
                            : c.Exec(std::string(kRecentSessionColumns) + order + "$1", {Int(limit)}, "cannot list sessions");
    REINS_RETURN_IF_ERROR(r);
    out.clear();
    for (int i = 0; i < r->size(); ++i) {
      RecentSession recent;
      REINS_ASSIGN_OR_RETURN(recent.session, SessionFromRow(*r, i));
      recent.last_status = r->Str(i, 6);
      recent.first_speaker = r->Str(i, 7);
      if (!r->IsNull(i, 8)) {
        REINS_ASSIGN_OR_RETURN(recent.first_input, store::ParseStoredJson(r->Str(i, 8), "the input of session '" +
                                                                                             recent.session.id + "''s first turn"));
      }
      out.push_back(std::move(recent));
    }
    return {};
  }));
  return out;
}

Result<int64_t> PostgresStore::CountSessions(std::optional<std::string> tenant) {
  int64_t count = 0;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    Result<Rows> r = tenant ? c.Exec("SELECT COUNT(*) FROM sessions WHERE tenant = $1", {Text(*tenant)}, "cannot count sessions")
                            : c.Exec("SELECT COUNT(*) FROM sessions", {}, "cannot count sessions");
    REINS_RETURN_IF_ERROR(r);
    count = r->Int(0, 0);
    return {};
  }));
  return count;
}

Result<std::vector<Message>> PostgresStore::LoadMessages(const std::string& session_id, TurnRange range) {
  std::vector<Message> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    if (!exists) return store::SessionNotFound(session_id);
    REINS_ASSIGN_OR_RETURN(
        Rows r, c.Exec("SELECT number, messages FROM turns WHERE session_id = $1 AND number > $2 ORDER BY number LIMIT $3",
                       {Text(session_id), Int(range.after), Int(range.limit)},
                       "cannot load the messages of session '" + session_id + "'"));
    out.clear();
    for (int i = 0; i < r.size(); ++i) {
      REINS_RETURN_IF_ERROR(store::AppendStoredMessages(r.Str(i, 1), r.Int(i, 0), session_id, out));
    }
    return {};
  }));
  return out;
}

Result<std::vector<StoredTurn>> PostgresStore::LoadTurns(const std::string& session_id, TurnRange range) {
  std::vector<StoredTurn> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    if (!exists) return store::SessionNotFound(session_id);
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(store::pg::kTurnColumns) +
                                              " WHERE session_id = $1 AND number > $2 ORDER BY number LIMIT $3",
                                          {Text(session_id), Int(range.after), Int(range.limit)},
                                          "cannot load the turns of session '" + session_id + "'"));
    out.clear();
    for (int i = 0; i < r.size(); ++i) {
      REINS_ASSIGN_OR_RETURN(StoredTurn t, store::pg::TurnFromRow(r, i));
      out.push_back(std::move(t));
    }
    return {};
  }));
  return out;
}

Result<std::optional<StoredTurn>> PostgresStore::FindTurnByKey(const std::string& session_id,
                                                               const std::string& idempotency_key) {
  std::optional<StoredTurn> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(store::pg::kTurnColumns) +
                                              " WHERE session_id = $1 AND idempotency_key = $2",
                                          {Text(session_id), Text(idempotency_key)},
                                          "cannot look up idempotency key '" + idempotency_key + "'"));
    out.reset();
    if (r.size() == 0) return {};
    REINS_ASSIGN_OR_RETURN(StoredTurn t, store::pg::TurnFromRow(r, 0));
    out = std::move(t);
    return {};
  }));
  return out;
}

Status PostgresStore::LinkConversation(const std::string& tenant, const std::string& digest,
                                       const std::string& session_id, int64_t at_ms) {
  return Call([&](Connection& c) -> Status {
    const std::string what = "cannot link a conversation to session '" + session_id + "'";
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    if (!exists) return store::SessionNotFound(session_id);
    return c.Exec("INSERT INTO conversations (tenant, digest, session_id, created_at) VALUES ($1, $2, $3, $4) "
                  "ON CONFLICT DO NOTHING",
                  {Text(tenant), Text(digest), Text(session_id), Int(at_ms)}, what)
        .status();
  });
}

Result<std::vector<std::string>> PostgresStore::FindConversation(const std::string& tenant, const std::string& digest,
                                                                 int limit) {
  std::vector<std::string> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT session_id FROM conversations WHERE tenant = $1 AND digest = $2 "
                                          "ORDER BY created_at, session_id LIMIT $3",
                                          {Text(tenant), Text(digest), Int(limit)}, "cannot look up a conversation"));
    out.clear();
    for (int i = 0; i < r.size(); ++i) out.push_back(r.Str(i, 0));
    return {};
  }));
  return out;
}

Result<std::vector<StoredInvocation>> PostgresStore::LoadInvocations(const std::string& session_id, TurnRange range) {
  std::vector<StoredInvocation> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    if (!exists) return store::SessionNotFound(session_id);
    REINS_ASSIGN_OR_RETURN(
        Rows r, c.Exec("SELECT i.turn_id, i.response_index, i.position, i.name, i.args, i.status, i.reason, "
                       "i.success, i.next_action, i.result, i.latency_ms, i.deferred "
                       "FROM tool_invocations i JOIN turns t ON t.id = i.turn_id "
                       "WHERE i.session_id = $1 AND t.number > $2 AND t.number - $2 <= $3 "
                       "ORDER BY t.number, i.response_index, i.position, i.id",
                       {Text(session_id), Int(range.after), Int(range.limit)},
                       "cannot load the tool invocations of session '" + session_id + "'"));
    out.clear();
    for (int i = 0; i < r.size(); ++i) {
      StoredInvocation v;
      v.turn_id = r.Str(i, 0);
      v.response_index = static_cast<int>(r.Int(i, 1));
      v.position = static_cast<int>(r.Int(i, 2));
      v.name = r.Str(i, 3);
      const std::string where = " of tool call '" + v.name + "' of turn '" + v.turn_id + "'";
      REINS_ASSIGN_OR_RETURN(v.args, store::ParseStoredJson(r.Str(i, 4), "the arguments" + where));
      v.status = r.Str(i, 5);
      v.reason = r.Str(i, 6);
      if (!r.IsNull(i, 7)) v.success = r.Int(i, 7) != 0;
      v.next_action = r.Str(i, 8);  // NULL reads as ""
      if (!r.IsNull(i, 9)) {
        REINS_ASSIGN_OR_RETURN(v.result, store::ParseStoredJson(r.Str(i, 9), "the result" + where));
      }
      v.latency_ms = r.Int(i, 10);
      v.deferred = r.Int(i, 11) != 0;
      out.push_back(std::move(v));
    }
    return {};
  }));
  return out;
}

}  // namespace reins

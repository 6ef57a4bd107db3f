// PostgresStore's outbox and notices: the durable half of deferred tools (I12), as in
// sqlite_outbox.cc. Where SQLite edits a turn's stored JSON in SQL, this reads the
// turn's row under FOR UPDATE, edits it in C++ and writes it back, in the same
// transaction as the outcome.
#include <string>

#include "domain/json_text.h"
#include "store/pg_connection.h"
#include "store/pg_store_rows.h"
#include "store/postgres_store.h"
#include "store/row_json.h"

namespace reins {
namespace {

using store::DumpJson;
using store::pg::Connection;
using store::pg::Int;
using store::pg::Rows;
using store::pg::Text;

constexpr const char* kOutboxColumns =
    "SELECT key, session_id, turn_id, tool, args, mode, status, attempts, result, step_id, updated_at FROM outbox";

Result<OutboxEntry> OutboxFromRow(const Rows& r, int i) {
  OutboxEntry e;
  e.key = r.Str(i, 0);
  e.session_id = r.Str(i, 1);
  e.turn_id = r.Str(i, 2);
  e.tool = r.Str(i, 3);
  REINS_ASSIGN_OR_RETURN(e.args, store::ParseStoredJson(r.Str(i, 4), "the arguments of outbox entry '" + e.key + "'"));
  e.mode = kDeferredModes.Parse(r.Str(i, 5)).value_or(DeferredMode::kAwait);  // the schema allows no other
  e.status = r.Str(i, 6);
  e.attempts = static_cast<int>(r.Int(i, 7));
  if (!r.IsNull(i, 8)) {
    REINS_ASSIGN_OR_RETURN(e.result, store::ParseStoredJson(r.Str(i, 8), "the result of outbox entry '" + e.key + "'"));
  }
  e.step_id = r.Str(i, 9);
  e.updated_at_ms = r.Int(i, 10);
  return e;
}

Result<std::vector<OutboxEntry>> OutboxRows(const Rows& r) {
  std::vector<OutboxEntry> out;
  for (int i = 0; i < r.size(); ++i) {
    REINS_ASSIGN_OR_RETURN(OutboxEntry e, OutboxFromRow(r, i));
    out.push_back(std::move(e));
  }
  return out;
}

// "[a,b]" + "[c]" -> "[a,b,c]": the turn's events with the outcome's appended.
std::string AppendEvents(const std::string& stored, const std::string& more) {
  if (stored.size() <= 2) return more;
  if (more.size() <= 2) return stored;
  return stored.substr(0, stored.size() - 1) + "," + more.substr(1);
}

// What an outcome changes in its turn's row: the trace, the plan step that queued the
// write (I7), and (await mode) the reply with its failure note, in the result and the
// last assistant message too (what the model reads next).
Status UpdateTurn(Connection& c, const DeferredOutcome& o, const std::string& turn_id, const std::string& step_id,
                  const std::string& what) {
  if (o.events.empty() && step_id.empty() && o.reply.empty()) return {};
  REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT events, result, messages, reply FROM turns WHERE id = $1 FOR UPDATE",
                                        {Text(turn_id)}, what));
  if (r.size() == 0) return {};  // a staged write whose turn never committed (a crash mid-stream)
  const std::string events = AppendEvents(r.Str(0, 0), store::DumpEvents(o.events));
  REINS_ASSIGN_OR_RETURN(Json result, store::ParseStoredJson(r.Str(0, 1), "the result of turn '" + turn_id + "'"));
  REINS_ASSIGN_OR_RETURN(Json messages, store::ParseStoredJson(r.Str(0, 2), "the messages of turn '" + turn_id + "'"));
  std::string reply = r.Str(0, 3);
  const Json::json_pointer steps_at("/plan/steps");
  if (!step_id.empty() && result.contains(steps_at) && result[steps_at].is_array()) {
    for (Json& step : result[steps_at]) {
      if (step.is_object() && step.value("id", "") == step_id) {
        step["deferredWrites"][o.key]["outcome"] = o.result.success ? "succeeded" : "failed";
      }
    }
  }
  if (!o.reply.empty()) {
    reply = o.reply;
    if (result.is_object()) result["reply"] = o.reply;
    if (messages.is_array() && !messages.empty() && messages.back().value("role", "") == "assistant") {
      messages.back()["text"] = o.reply;
    }
  }
  return c.Exec("UPDATE turns SET events = $1, result = $2, messages = $3, reply = $4 WHERE id = $5",
                {Text(events), Text(DumpJson(result)), Text(DumpJson(messages)), Text(reply), Text(turn_id)}, what)
      .status();
}

}  // namespace

Result<bool> PostgresStore::ClaimOutbox(const std::string& key, int64_t now_ms) {
  bool claimed = false;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    // A running entry may belong to another replica that is running it right now; it
    // is taken over only once it has been running for the store's outbox_lapse_ms (its
    // replica died). SKIP LOCKED: an entry another replica is claiming or settling at
    // this instant is theirs; this claim passes it by instead of waiting behind them.
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("UPDATE outbox SET status = 'running', attempts = attempts + 1, updated_at = $1 "
                                          "WHERE key = (SELECT key FROM outbox WHERE key = $2 AND (status IN ('pending', 'staged') OR "
                                          "(status = 'running' AND updated_at <= $1::bigint - $3::bigint)) "
                                          "FOR UPDATE SKIP LOCKED)",
                                          {Int(now_ms), Text(key), Int(pool_->options().outbox_lapse_ms)},
                                          "cannot claim outbox entry '" + key + "'"));
    claimed = r.affected() == 1;
    return {};
  }));
  return claimed;
}

Status PostgresStore::StageOutbox(const std::vector<OutboxEntry>& entries) {
  const std::string what = "cannot stage the deferred calls of a streamed reply";
  return Call([&](Connection& c) -> Status {
    store::pg::Transaction tx(c, what);
    REINS_RETURN_IF_ERROR(tx.begun());
    for (const OutboxEntry& e : entries) {
      REINS_RETURN_IF_ERROR(c.Exec(
          "INSERT INTO outbox (key, session_id, turn_id, tool, args, mode, status, attempts, created_at, updated_at, "
          "step_id) VALUES ($1, $2, $3, $4, $5, $6, 'staged', 0, $7, $7, $8) ON CONFLICT (key) DO NOTHING",
          store::pg::OutboxRowParams(e.key, e.session_id, e.turn_id, e.tool, e.args, e.mode, e.updated_at_ms, e.step_id),
          what));
    }
    return tx.Commit();
  });
}

Status PostgresStore::RecordDeferredOutcome(const DeferredOutcome& o) {
  const std::string what = "cannot record the outcome of deferred call '" + o.key + "'";
  return Call([&](Connection& c) -> Status {
    store::pg::Transaction tx(c, what);
    REINS_RETURN_IF_ERROR(tx.begun());
    REINS_ASSIGN_OR_RETURN(Rows found, c.Exec("SELECT session_id, turn_id, step_id, status FROM outbox WHERE key = $1 "
                                              "FOR UPDATE",
                                              {Text(o.key)}, what));
    if (found.size() == 0) return NotFound("outbox entry '" + o.key + "' does not exist");
    if (found.Str(0, 3) == "done") return store::OutcomeAlreadyRecorded(o.key);
    const std::string session_id = found.Str(0, 0);
    const std::string turn_id = found.Str(0, 1);
    const std::string envelope = EnvelopeText(o.result);
    REINS_RETURN_IF_ERROR(c.Exec("UPDATE outbox SET status = 'done', result = $1, updated_at = $2 WHERE key = $3",
                                 {Text(envelope), Int(o.at_ms), Text(o.key)}, what));
    REINS_RETURN_IF_ERROR(c.Exec("UPDATE tool_invocations SET success = $1, next_action = $2, result = $3, latency_ms = $4, "
                                 "message = $5 WHERE idempotency_key = $6",
                                 {Int(o.result.success ? 1 : 0), Text(NextActionName(o.result.next_action)),
                                  Text(envelope), Int(o.latency_ms), Text(o.result.success ? "" : o.result.error),
                                  Text(o.key)},
                                 what));
    REINS_RETURN_IF_ERROR(UpdateTurn(c, o, turn_id, found.Str(0, 2), what));
    if (!o.notice.empty()) {
      REINS_RETURN_IF_ERROR(c.Exec("INSERT INTO notices (session_id, turn_id, text, created_at) VALUES ($1, $2, $3, $4)",
                                   {Text(session_id), Text(turn_id), Text(o.notice), Int(o.at_ms)}, what));
    }
    return tx.Commit();
  });
}

Result<std::vector<OutboxEntry>> PostgresStore::UnfinishedOutbox() {
  Result<std::vector<OutboxEntry>> out = std::vector<OutboxEntry>();
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(kOutboxColumns) + " WHERE status <> 'done' ORDER BY created_at, key",
                                          {}, "cannot read the outbox"));
    out = OutboxRows(r);
    return {};
  }));
  return out;
}

Result<std::vector<OutboxEntry>> PostgresStore::LoadOutbox(const std::string& session_id) {
  Result<std::vector<OutboxEntry>> out = std::vector<OutboxEntry>();
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(kOutboxColumns) + " WHERE session_id = $1 ORDER BY created_at, key",
                                          {Text(session_id)}, "cannot read the outbox of session '" + session_id + "'"));
    out = OutboxRows(r);
    return {};
  }));
  return out;
}

Result<std::vector<Notice>> PostgresStore::PendingNotices(const std::string& session_id) {
  std::vector<Notice> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT id, session_id, turn_id, text FROM notices "
                                          "WHERE session_id = $1 AND delivered_turn_id IS NULL ORDER BY id",
                                          {Text(session_id)}, "cannot read the notices of session '" + session_id + "'"));
    out.clear();
    for (int i = 0; i < r.size(); ++i) out.push_back({r.Int(i, 0), r.Str(i, 1), r.Str(i, 2), r.Str(i, 3)});
    return {};
  }));
  return out;
}

}  // namespace reins

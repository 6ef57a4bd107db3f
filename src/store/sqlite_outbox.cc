// SqliteStore's outbox and notices: the durable half of deferred tools (I12).
//
// A deferred call's row is inserted with its turn (sqlite_commit.cc). A worker claims
// it (pending -> running, attempts + 1), runs it with the row's key as idempotency key,
// then records the outcome here: the row is done, the tool invocation gets its result,
// the turn gets the trace events, and a failure becomes a note on the reply or a
// notice for the next one, all in one transaction.
#include "domain/json_text.h"
#include "store/row_json.h"
#include "store/sqlite_store.h"
#include "store/sqlite_util.h"

namespace reins {
namespace {

using store::ColumnJson;
using store::DumpJson;
using store::Guarded;

constexpr const char* kOutboxColumns =
    "SELECT key, session_id, turn_id, tool, args, mode, status, attempts, result, step_id, updated_at FROM outbox";

OutboxEntry OutboxFromRow(SQLite::Statement& q) {
  OutboxEntry e;
  e.key = q.getColumn(0).getString();
  e.session_id = q.getColumn(1).getString();
  e.turn_id = q.getColumn(2).getString();
  e.tool = q.getColumn(3).getString();
  e.args = ColumnJson(q.getColumn(4), "the arguments of outbox entry '" + e.key + "'");
  e.mode = kDeferredModes.Parse(q.getColumn(5).getString()).value_or(DeferredMode::kAwait);  // the schema allows no other
  e.status = q.getColumn(6).getString();
  e.attempts = q.getColumn(7).getInt();
  e.result = ColumnJson(q.getColumn(8), "the result of outbox entry '" + e.key + "'");
  e.step_id = q.getColumn(9).getString();
  e.updated_at_ms = q.getColumn(10).getInt64();
  return e;
}

}  // namespace

Result<bool> SqliteStore::ClaimOutbox(const std::string& key, int64_t now_ms) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot claim outbox entry '" + key + "'", [&]() -> Result<bool> {
    SQLite::Statement& q = statements_->Get(
        "UPDATE outbox SET status = 'running', attempts = attempts + 1, updated_at = ? "
        "WHERE key = ? AND status <> 'done'");
    q.bind(1, now_ms);
    q.bind(2, key);
    return q.exec() == 1;
  });
}

Status SqliteStore::StageOutbox(const std::vector<OutboxEntry>& entries) {
  std::lock_guard lock(mu_);
  return Guarded("cannot stage the deferred calls of a streamed reply", [&]() -> Status {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    store::ResetOnExit reset(*statements_);
    SQLite::Statement& q = statements_->Get(
        "INSERT INTO outbox (key, session_id, turn_id, tool, args, mode, status, attempts, created_at, updated_at, "
        "step_id) VALUES (?, ?, ?, ?, ?, ?, 'staged', 0, ?, ?, ?) ON CONFLICT(key) DO NOTHING");
    for (const OutboxEntry& e : entries) {
      q.reset();
      store::BindOutboxRow(q, e.key, e.session_id, e.turn_id, e.tool, e.args, e.mode, e.updated_at_ms, e.step_id);
      q.exec();
    }
    tx.commit();
    return {};
  });
}

Status SqliteStore::RecordDeferredOutcome(const DeferredOutcome& o) {
  std::lock_guard lock(mu_);
  return Guarded("cannot record the outcome of deferred call '" + o.key + "'", [&]() -> Status {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    store::ResetOnExit reset(*statements_);
    store::StatementCache& sc = *statements_;
    SQLite::Statement& find = sc.Get("SELECT session_id, turn_id, step_id, status FROM outbox WHERE key = ?");
    find.bind(1, o.key);
    if (!find.executeStep()) return NotFound("outbox entry '" + o.key + "' does not exist");
    if (find.getColumn(3).getString() == "done") return store::OutcomeAlreadyRecorded(o.key);
    const std::string session_id = find.getColumn(0).getString();
    const std::string turn_id = find.getColumn(1).getString();
    const std::string step_id = find.getColumn(2).getString();
    const std::string envelope = EnvelopeText(o.result);

    SQLite::Statement& done = sc.Get("UPDATE outbox SET status = 'done', result = ?, updated_at = ? WHERE key = ?");
    done.bind(1, envelope);
    done.bind(2, o.at_ms);
    done.bind(3, o.key);
    done.exec();

    SQLite::Statement& call = sc.Get(
        "UPDATE tool_invocations SET success = ?, next_action = ?, result = ?, latency_ms = ?, message = ? "
        "WHERE idempotency_key = ?");
    call.bind(1, o.result.success ? 1 : 0);
    call.bind(2, std::string(NextActionName(o.result.next_action)));
    call.bind(3, envelope);
    call.bind(4, o.latency_ms);
    call.bind(5, o.result.success ? std::string() : o.result.error);
    call.bind(6, o.key);
    call.exec();

    if (!o.events.empty()) {
      // json_insert with '$[#]' appends to the stored array without rewriting it here.
      SQLite::Statement& events = sc.Get("UPDATE turns SET events = json_insert(events, '$[#]', json(?)) WHERE id = ?");
      for (const TraceEvent& e : o.events) {
        events.reset();
        events.bind(1, DumpJson(TraceEventToJson(e)));
        events.bind(2, turn_id);
        events.exec();
      }
    }
    if (!step_id.empty()) {
      // The plan step that queued the write shows what became of it (I7).
      SQLite::Statement& step = sc.Get(
          "UPDATE turns SET result = json_set(result, '$.plan.steps[' || "
          "(SELECT s.key FROM json_each(turns.result, '$.plan.steps') s WHERE json_extract(s.value, '$.id') = ?1) || "
          "'].deferredWrites.\"' || ?2 || '\".outcome', ?3) "
          "WHERE id = ?4 AND EXISTS (SELECT 1 FROM json_each(turns.result, '$.plan.steps') s "
          "WHERE json_extract(s.value, '$.id') = ?1)");
      step.bind(1, step_id);
      step.bind(2, o.key);
      step.bind(3, std::string(o.result.success ? "succeeded" : "failed"));
      step.bind(4, turn_id);
      step.exec();
    }
    if (!o.reply.empty()) {
      // The reply, its copy in the result, and the turn's last assistant message (what
      // the model will read next) all carry the note.
      SQLite::Statement& reply = sc.Get(
          "UPDATE turns SET reply = ?1, result = json_set(result, '$.reply', ?1), "
          "messages = CASE WHEN json_extract(messages, '$[#-1].role') = 'assistant' "
          "THEN json_set(messages, '$[#-1].text', ?1) ELSE messages END WHERE id = ?2");
      reply.bind(1, o.reply);
      reply.bind(2, turn_id);
      reply.exec();
    }
    if (!o.notice.empty()) {
      SQLite::Statement& notice = sc.Get("INSERT INTO notices (session_id, turn_id, text, created_at) VALUES (?, ?, ?, ?)");
      notice.bind(1, session_id);
      notice.bind(2, turn_id);
      notice.bind(3, o.notice);
      notice.bind(4, o.at_ms);
      notice.exec();
    }
    tx.commit();
    return {};
  });
}

Result<std::vector<OutboxEntry>> SqliteStore::UnfinishedOutbox() {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot read the outbox", [&]() -> Result<std::vector<OutboxEntry>> {
    SQLite::Statement& q = statements_->Get(std::string(kOutboxColumns) + " WHERE status <> 'done' ORDER BY created_at, key");
    std::vector<OutboxEntry> out;
    while (q.executeStep()) out.push_back(OutboxFromRow(q));
    return out;
  });
}

Result<std::vector<OutboxEntry>> SqliteStore::LoadOutbox(const std::string& session_id) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot read the outbox of session '" + session_id + "'", [&]() -> Result<std::vector<OutboxEntry>> {
    SQLite::Statement& q = statements_->Get(std::string(kOutboxColumns) + " WHERE session_id = ? ORDER BY created_at, key");
    q.bind(1, session_id);
    std::vector<OutboxEntry> out;
    while (q.executeStep()) out.push_back(OutboxFromRow(q));
    return out;
  });
}

Result<std::vector<Notice>> SqliteStore::PendingNotices(const std::string& session_id) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot read the notices of session '" + session_id + "'", [&]() -> Result<std::vector<Notice>> {
    SQLite::Statement& q = statements_->Get(
        "SELECT id, session_id, turn_id, text FROM notices WHERE session_id = ? AND delivered_turn_id IS NULL ORDER BY id");
    q.bind(1, session_id);
    std::vector<Notice> out;
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                     q.getColumn(3).getString()});
    }
    return out;
  });
}

}  // namespace reins

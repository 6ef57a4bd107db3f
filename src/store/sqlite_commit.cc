// SqliteStore::CommitTurn: everything a turn produced, in one transaction.
//
// Each step below throws (SQLiteCpp) or returns a non-OK Status; either way the
// Transaction is destroyed uncommitted and rolls back, so the database holds the whole
// turn or none of it.
#include <sqlite3.h>

#include <string>
#include <vector>

#include "domain/json_text.h"
#include "store/sqlite_store.h"
#include "store/sqlite_util.h"

namespace reins {
namespace {

using store::DumpJson;

// A turn's rows as text (its events, messages and result; its tools' arguments and
// envelopes; the session's state), rendered before the store's lock is taken: the JSON
// work then runs on each caller's thread at once, and the lock, which every event loop
// waits on, covers SQLite's work alone (docs/PERFORMANCE.md, "Many cores").
struct TurnRows {
  store::TurnText text;
  std::string state;
  std::vector<std::string> args;       // each tool outcome's arguments
  std::vector<std::string> envelopes;  // each tool outcome's result envelope; "" when it has none

  void Render(const TurnRecord& turn) {
    store::FillTurnText(turn, text);
    state = DumpJson(turn.session_state);
    args.clear();
    envelopes.clear();
    for (const ToolOutcome& t : turn.result.tools) {
      args.push_back(DumpJson(t.args));
      envelopes.push_back(t.result ? EnvelopeText(*t.result) : std::string());
    }
  }
  // A rare large turn does not leave its capacity behind in a thread's reused rows.
  void Trim() {
    constexpr size_t kKept = 64 * 1024;
    if (text.events.capacity() > kKept) std::string().swap(text.events);
    if (text.messages.capacity() > kKept) std::string().swap(text.messages);
  }
};

// The rows of a batch, reused by each thread that commits: once warm, rendering a turn
// allocates nothing for its texts (docs/PERFORMANCE.md, round 12). What fails here (it
// cannot but run out of memory) fails the batch, as it did inside the transaction.
Result<std::vector<TurnRows>*> RenderedRows(const std::vector<const TurnRecord*>& turns) {
  thread_local std::vector<TurnRows> rows;
  return store::Guarded("cannot render a batch of " + std::to_string(turns.size()) + " turns",
                        [&]() -> Result<std::vector<TurnRows>*> {
                          if (rows.size() < turns.size()) rows.resize(turns.size());
                          for (size_t i = 0; i < turns.size(); ++i) rows[i].Render(*turns[i]);
                          return &rows;
                        });
}

void TrimRows(std::vector<TurnRows>& rows) {
  for (TurnRows& r : rows) r.Trim();
}

void InsertTurn(store::StatementCache& db, const TurnRecord& turn, const store::TurnText& text) {
  const TurnResult& r = turn.result;
  SQLite::Statement& q = db.Get(
                      "INSERT INTO turns (id, session_id, number, speaker, status, reply, input, result, "
                      "error, events, created_at, messages, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  // Bound in place: the record and its rows outlive exec() (StatementCache).
  q.bindNoCopy(1, r.turn_id);
  q.bindNoCopy(2, turn.session_id);
  q.bind(3, r.turn_number);
  q.bindNoCopy(4, turn.speaker);
  q.bind(5, std::string(TurnStatusName(r.status)));
  q.bindNoCopy(6, r.reply);
  q.bindNoCopy(7, text.input);
  q.bindNoCopy(8, text.result);
  q.bindNoCopy(9, r.error);
  // One row per turn rather than per event: a turn's events are always read together.
  q.bindNoCopy(10, text.events);
  q.bind(11, turn.created_at_ms);
  q.bindNoCopy(12, text.messages);
  if (text.idempotency_key) {
    q.bindNoCopy(13, *text.idempotency_key);
  } else {
    q.bind(13);  // NULL
  }
  q.exec();
}

void InsertInvocations(store::StatementCache& db, const TurnRecord& turn, const TurnRows& rows) {
  SQLite::Statement& q = db.Get(
                      "INSERT INTO tool_invocations (session_id, turn_id, response_index, position, call_id, "
                      "name, args, status, reason, success, next_action, result, latency_ms, deferred, message, "
                      "idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t i = 0; i < turn.result.tools.size(); ++i) {
    const ToolOutcome& t = turn.result.tools[i];
    q.reset();
    q.clearBindings();  // the envelope columns stay NULL when there is no envelope
    // Bound in place: the record and its rows outlive this row's exec().
    const std::string& args = rows.args[i];
    const std::string& envelope = rows.envelopes[i];
    q.bindNoCopy(1, turn.session_id);
    q.bindNoCopy(2, turn.result.turn_id);
    q.bind(3, t.response_index);
    q.bind(4, t.position);
    q.bindNoCopy(5, t.call_id);
    q.bindNoCopy(6, t.name);
    q.bindNoCopy(7, args);
    q.bind(8, std::string(ToolOutcomeStatusName(t.status)));
    q.bindNoCopy(9, t.reason);
    if (t.result) {
      q.bind(10, t.result->success ? 1 : 0);
      q.bind(11, std::string(NextActionName(t.result->next_action)));
      q.bindNoCopy(12, envelope);
    }
    q.bind(13, t.latency_ms);
    q.bind(14, t.status == ToolOutcome::Status::kDeferred ? 1 : 0);
    q.bindNoCopy(15, t.message);
    if (!t.idempotency_key.empty()) q.bindNoCopy(16, t.idempotency_key);
    q.exec();
  }
}

// Deferred calls enter the outbox with the turn, before its reply is delivered (I12).
// A streamed reply staged them before its first delta: they become pending, and the
// staged ones the turn withdrew (it failed) go.
void EnqueueDeferred(store::StatementCache& db, const TurnRecord& turn) {
  for (const ToolOutcome& t : turn.result.tools) {
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    SQLite::Statement& q = db.Get(
        turn.outbox_staged
            ? "INSERT INTO outbox (key, session_id, turn_id, tool, args, mode, status, attempts, created_at, updated_at, "
              "step_id) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
              "status = 'pending', mode = excluded.mode, updated_at = excluded.updated_at WHERE outbox.status = 'staged'"
            : "INSERT INTO outbox (key, session_id, turn_id, tool, args, mode, status, attempts, created_at, updated_at, "
              "step_id) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)");
    store::BindOutboxRow(q, t.idempotency_key, turn.session_id, turn.result.turn_id, t.name, t.args, turn.deferred_mode,
                         turn.created_at_ms, t.step_id);
    q.exec();
  }
  if (turn.outbox_staged) {
    SQLite::Statement& withdrawn = db.Get("DELETE FROM outbox WHERE turn_id = ? AND status = 'staged'");
    withdrawn.bind(1, turn.result.turn_id);
    withdrawn.exec();
  }
}

void WithdrawClarification(store::StatementCache& db, const TurnRecord& turn) {
  SQLite::Statement& q = db.Get(
      "UPDATE clarifications SET status = 'superseded' WHERE id = ? AND session_id = ? AND status = 'pending'");
  q.bind(1, turn.withdrawn_clarification_id);
  q.bind(2, turn.session_id);
  q.exec();
}

// Approvals: the one this turn opened, and the decision or cancellation it made.
void RecordApprovals(store::StatementCache& db, const TurnRecord& turn) {
  if (const auto& a = turn.result.approval) {
    SQLite::Statement& q = db.Get(
        "INSERT INTO approvals (id, session_id, turn_id, tool, args, status) VALUES (?, ?, ?, ?, ?, 'pending')");
    q.bind(1, a->id);
    q.bind(2, turn.session_id);
    q.bind(3, turn.result.turn_id);
    q.bind(4, a->tool);
    q.bind(5, DumpJson(a->args));
    q.exec();
  }
  if (!turn.decided_approval_id.empty()) {
    SQLite::Statement& q = db.Get(
        "UPDATE approvals SET status = ?, decided_by = ?, decided_turn_id = ?, decided_at = ?, approved_args = ?, "
        "message = ? WHERE id = ? AND session_id = ? AND status = 'pending'");
    q.bind(1, turn.approval_decision);
    q.bind(2, turn.speaker);
    q.bind(3, turn.result.turn_id);
    q.bind(4, turn.created_at_ms);
    if (turn.approved_args.is_null()) {
      q.bind(5);
    } else {
      q.bind(5, DumpJson(turn.approved_args));
    }
    if (turn.approval_message.empty()) {
      q.bind(6);
    } else {
      q.bind(6, turn.approval_message);
    }
    q.bind(7, turn.decided_approval_id);
    q.bind(8, turn.session_id);
    q.exec();
  }
  for (const auto& [id, status] : {std::make_pair(turn.cancelled_approval_id, std::string("cancelled")),
                                   std::make_pair(turn.lapsed_approval_id, std::string("lapsed"))}) {
    if (id.empty()) continue;
    SQLite::Statement& q = db.Get(
        "UPDATE approvals SET status = ?, decided_by = ?, decided_turn_id = ?, decided_at = ? "
        "WHERE id = ? AND session_id = ? AND status = 'pending'");
    q.bind(1, status);
    q.bind(2, turn.speaker);
    q.bind(3, turn.result.turn_id);
    q.bind(4, turn.created_at_ms);
    q.bind(5, id);
    q.bind(6, turn.session_id);
    q.exec();
  }
}

void MarkNoticesDelivered(store::StatementCache& db, const TurnRecord& turn) {
  for (int64_t id : turn.delivered_notices) {
    SQLite::Statement& q = db.Get("UPDATE notices SET delivered_turn_id = ? WHERE id = ? AND delivered_turn_id IS NULL");
    q.bind(1, turn.result.turn_id);
    q.bind(2, id);
    q.exec();
  }
}

// Marks the clarification this turn answered. Only a pending one can be answered: an
// answered or superseded one means the caller's view of the session is stale.
Status AnswerClarification(store::StatementCache& db, const TurnRecord& turn) {
  const std::string& id = turn.answered_clarification_id;
  SQLite::Statement& find = db.Get("SELECT status FROM clarifications WHERE id = ? AND session_id = ?");
  find.bind(1, id);
  find.bind(2, turn.session_id);
  if (!find.executeStep()) {
    return NotFound("clarification '" + id + "' does not exist in session '" + turn.session_id + "'");
  }
  const std::string status = find.getColumn(0).getString();
  if (status != "pending") {
    return FailedPrecondition("clarification '" + id + "' is " + status + ", not pending; it cannot be answered");
  }
  SQLite::Statement& q = db.Get("UPDATE clarifications SET status = 'answered', chosen_option = ? WHERE id = ?");
  q.bind(1, turn.chosen_option_id);
  q.bind(2, id);
  q.exec();
  return OkStatus();
}

// Opens the turn's clarification; any other one still pending in the session is
// superseded, so at most one is pending at a time.
void OpenClarification(store::StatementCache& db, const TurnRecord& turn, const PendingClarification& p) {
  SQLite::Statement& supersede = db.Get(
                              "UPDATE clarifications SET status = 'superseded' "
                              "WHERE session_id = ? AND status = 'pending' AND id <> ?");
  supersede.bind(1, turn.session_id);
  supersede.bind(2, p.id);
  supersede.exec();

  SQLite::Statement& q = db.Get(
                      "INSERT INTO clarifications (id, session_id, turn_id, tool, entity_type, type, question, "
                      "request_text, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')");
  q.bind(1, p.id);
  q.bind(2, turn.session_id);
  q.bind(3, turn.result.turn_id);
  q.bind(4, p.tool);
  q.bind(5, p.entity_type);
  q.bind(6, p.clarification.type);
  q.bind(7, p.clarification.question);
  q.bind(8, p.request_text);
  q.exec();

  SQLite::Statement& opt = db.Get(
                        "INSERT INTO clarification_options (clarification_id, position, option_id, title, "
                        "subtitle, confidence, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)");
  int position = 0;
  for (const ClarificationOption& o : p.clarification.options) {
    opt.reset();
    opt.clearBindings();
    opt.bind(1, p.id);
    opt.bind(2, position++);
    opt.bind(3, o.id);
    opt.bind(4, o.title);
    opt.bind(5, o.subtitle);
    if (o.confidence) opt.bind(6, *o.confidence);
    if (!o.metadata.is_null()) opt.bind(7, DumpJson(o.metadata));
    opt.exec();
  }
}

void UpdateSession(store::StatementCache& db, const TurnRecord& turn, const std::string& state) {
  SQLite::Statement& q = db.Get("UPDATE sessions SET state = ?, turn_count = ? WHERE id = ?");
  q.bindNoCopy(1, state);
  q.bind(2, turn.result.turn_number);
  q.bindNoCopy(3, turn.session_id);
  q.exec();
}

// Everything one turn writes, inside the caller's transaction. An error status (or
// an exception) means the caller must roll this turn's writes back.
Status WriteTurn(store::StatementCache& sc, const TurnRecord& turn, const TurnRows& rows) {
  // The keys check instead of extra queries: an unknown session fails the turn's
  // foreign key, a duplicate turn (or new session) id its primary key (Guarded maps it
  // to AlreadyExists).
  if (turn.new_session) {
    // The session this turn begins, already as the turn leaves it: one row written
    // instead of a row written and then updated.
    REINS_RETURN_IF_ERROR(store::CheckBegunSession(turn));
    REINS_RETURN_IF_ERROR(store::InsertSession(sc, *turn.new_session, rows.state, turn.result.turn_number));
  }
  try {
    InsertTurn(sc, turn, rows.text);
  } catch (const SQLite::Exception& e) {
    if (e.getExtendedErrorCode() == SQLITE_CONSTRAINT_FOREIGNKEY) return store::SessionNotFound(turn.session_id);
    throw;
  }
  InsertInvocations(sc, turn, rows);
  EnqueueDeferred(sc, turn);
  MarkNoticesDelivered(sc, turn);
  RecordApprovals(sc, turn);
  if (!turn.withdrawn_clarification_id.empty()) WithdrawClarification(sc, turn);
  // Answer before opening: a turn that answers one clarification and opens another
  // must not supersede the one it just answered.
  if (!turn.answered_clarification_id.empty()) REINS_RETURN_IF_ERROR(AnswerClarification(sc, turn));
  if (turn.result.clarification) OpenClarification(sc, turn, *turn.result.clarification);
  if (!turn.new_session) UpdateSession(sc, turn, rows.state);
  if (turn.lease_change) {
    Result<int64_t> version = store::CompareAndSetLease(sc, turn.session_id, *turn.lease_change,
                                                        turn.lease_expected_version);
    if (!version.ok()) return version.status();  // another writer moved the floor: nothing is written
  }
  return {};
}

std::string CommitWhat(const TurnRecord& turn) {
  return "cannot commit turn '" + turn.result.turn_id + "' of session '" + turn.session_id + "'";
}

std::string BatchWhat(size_t turns) { return "cannot commit a batch of " + std::to_string(turns) + " turns"; }

// The turns in one transaction, under the store's lock: all of them, or (an error)
// none.
Status CommitWhole(store::StatementCache& sc, const std::vector<const TurnRecord*>& turns,
                   const std::vector<TurnRows>& rows, const std::string& what) {
  return store::Guarded(what, [&]() -> Status {
    store::ResetOnExit reset(sc);
    store::CachedTransaction tx(sc);
    for (size_t i = 0; i < turns.size(); ++i) REINS_RETURN_IF_ERROR(WriteTurn(sc, *turns[i], rows[i]));
    tx.Commit();
    return {};
  });
}

// The batch with a savepoint per turn, under the store's lock: a turn that fails is
// rolled back to its savepoint alone, and the others commit.
std::vector<Status> CommitEach(store::StatementCache& sc, const std::vector<const TurnRecord*>& turns,
                               const std::vector<TurnRows>& rows) {
  std::vector<Status> out(turns.size());
  Status whole = store::Guarded(BatchWhat(turns.size()), [&]() -> Status {
    store::ResetOnExit reset(sc);
    store::CachedTransaction tx(sc);
    for (size_t i = 0; i < turns.size(); ++i) {
      sc.Get("SAVEPOINT turn").exec();
      out[i] = store::Guarded(CommitWhat(*turns[i]), [&] { return WriteTurn(sc, *turns[i], rows[i]); });
      sc.ResetAll();  // no statement may be mid-step at a rollback
      if (!out[i].ok()) sc.Get("ROLLBACK TO turn").exec();
      sc.Get("RELEASE turn").exec();
    }
    tx.Commit();
    return {};
  });
  if (!whole.ok()) {
    for (Status& s : out) {
      if (s.ok()) s = whole;  // the transaction failed: none of them is written
    }
  }
  return out;
}

}  // namespace

Status SqliteStore::CommitTurn(const TurnRecord& turn) {
  const std::vector<const TurnRecord*> turns = {&turn};
  Result<std::vector<TurnRows>*> rendered = RenderedRows(turns);
  if (!rendered.ok()) return rendered.status();
  Status status;
  {
    std::lock_guard lock(mu_);
    status = CommitWhole(*statements_, turns, **rendered, CommitWhat(turn));
  }
  TrimRows(**rendered);
  return status;
}

// A batch is first one transaction: each turn costs its rows and nothing more. A turn
// that fails rolls the whole of it back, and the batch runs again with a savepoint per
// turn, so that the turn that failed is rolled back alone.
std::vector<Status> SqliteStore::CommitTurns(const std::vector<const TurnRecord*>& turns) {
  if (turns.size() == 1) return {CommitTurn(*turns.front())};
  Result<std::vector<TurnRows>*> rendered = RenderedRows(turns);
  if (!rendered.ok()) return std::vector<Status>(turns.size(), rendered.status());
  std::vector<Status> out;
  {
    std::lock_guard lock(mu_);
    const Status all = CommitWhole(*statements_, turns, **rendered, BatchWhat(turns.size()));
    out = all.ok() ? std::vector<Status>(turns.size()) : CommitEach(*statements_, turns, **rendered);
  }
  TrimRows(**rendered);
  return out;
}

}  // namespace reins

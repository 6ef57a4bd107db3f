// PostgresStore's turn commit (everything a turn produced, in one transaction, fenced
// by the turn's session claim), the claims themselves, and the floor lease's
// compare-and-set. The statements mirror SQLite's (sqlite_commit.cc,
// sqlite_lease.cc).
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
using store::pg::Null;
using store::pg::Param;
using store::pg::Rows;
using store::pg::Text;

Param Flag(bool value) { return Int(value ? 1 : 0); }

Status InsertTurn(Connection& c, const TurnRecord& turn, const std::string& what) {
  const TurnResult& r = turn.result;
  store::TurnText text = store::TurnTextOf(turn);
  Result<Rows> inserted = c.Exec(
      "INSERT INTO turns (id, session_id, number, speaker, status, reply, input, result, error, events, created_at, "
      "messages, idempotency_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
      {Text(r.turn_id), Text(turn.session_id), Int(r.turn_number), Text(turn.speaker), Text(TurnStatusName(r.status)),
       Text(r.reply), Text(text.input), Text(text.result), Text(r.error), Text(text.events), Int(turn.created_at_ms),
       Text(text.messages), text.idempotency_key ? Text(*text.idempotency_key) : Null()},
      what);
  // The keys check instead of extra queries: an unknown session fails the foreign key.
  if (inserted.status().code() == StatusCode::kFailedPrecondition) return store::SessionNotFound(turn.session_id);
  return inserted.status();
}

Status InsertInvocations(Connection& c, const TurnRecord& turn, const std::string& what) {
  for (const ToolOutcome& t : turn.result.tools) {
    const bool enveloped = t.result.has_value();
    REINS_RETURN_IF_ERROR(c.Exec(
        "INSERT INTO tool_invocations (session_id, turn_id, response_index, position, call_id, name, args, status, "
        "reason, success, next_action, result, latency_ms, deferred, message, idempotency_key) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        {Text(turn.session_id), Text(turn.result.turn_id), Int(t.response_index), Int(t.position), Text(t.call_id),
         Text(t.name), Text(DumpJson(t.args)), Text(ToolOutcomeStatusName(t.status)), Text(t.reason),
         enveloped ? Flag(t.result->success) : Null(), enveloped ? Text(NextActionName(t.result->next_action)) : Null(),
         enveloped ? Text(EnvelopeText(*t.result)) : Null(), Int(t.latency_ms),
         Flag(t.status == ToolOutcome::Status::kDeferred), Text(t.message),
         t.idempotency_key.empty() ? Null() : Text(t.idempotency_key)},
        what));
  }
  return {};
}

// Deferred calls enter the outbox with the turn, before its reply is delivered (I12).
// A streamed reply staged them before its first delta: they become pending, and the
// staged ones the turn withdrew (it failed) go.
Status EnqueueDeferred(Connection& c, const TurnRecord& turn, const std::string& what) {
  for (const ToolOutcome& t : turn.result.tools) {
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    REINS_RETURN_IF_ERROR(c.Exec(
        turn.outbox_staged
            ? "INSERT INTO outbox (key, session_id, turn_id, tool, args, mode, status, attempts, created_at, updated_at, "
              "step_id) VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, $8) ON CONFLICT (key) DO UPDATE SET "
              "status = 'pending', mode = excluded.mode, updated_at = excluded.updated_at WHERE outbox.status = 'staged'"
            : "INSERT INTO outbox (key, session_id, turn_id, tool, args, mode, status, attempts, created_at, updated_at, "
              "step_id) VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, $8)",
        store::pg::OutboxRowParams(t.idempotency_key, turn.session_id, turn.result.turn_id, t.name, t.args,
                                   turn.deferred_mode, turn.created_at_ms, t.step_id),
        what));
  }
  if (turn.outbox_staged) {
    REINS_RETURN_IF_ERROR(c.Exec("DELETE FROM outbox WHERE turn_id = $1 AND status = 'staged'",
                                 {Text(turn.result.turn_id)}, what));
  }
  return {};
}

Status RecordApprovals(Connection& c, const TurnRecord& turn, const std::string& what) {
  if (const auto& a = turn.result.approval) {
    REINS_RETURN_IF_ERROR(c.Exec(
        "INSERT INTO approvals (id, session_id, turn_id, tool, args, status) VALUES ($1, $2, $3, $4, $5, 'pending')",
        {Text(a->id), Text(turn.session_id), Text(turn.result.turn_id), Text(a->tool), Text(DumpJson(a->args))}, what));
  }
  if (!turn.decided_approval_id.empty()) {
    REINS_RETURN_IF_ERROR(c.Exec(
        "UPDATE approvals SET status = $1, decided_by = $2, decided_turn_id = $3, decided_at = $4, approved_args = $5, "
        "message = $6 WHERE id = $7 AND session_id = $8 AND status = 'pending'",
        {Text(turn.approval_decision), Text(turn.speaker), Text(turn.result.turn_id), Int(turn.created_at_ms),
         turn.approved_args.is_null() ? Null() : Text(DumpJson(turn.approved_args)),
         turn.approval_message.empty() ? Null() : Text(turn.approval_message), Text(turn.decided_approval_id),
         Text(turn.session_id)},
        what));
  }
  for (const auto& [id, status] : {std::make_pair(turn.cancelled_approval_id, std::string("cancelled")),
                                   std::make_pair(turn.lapsed_approval_id, std::string("lapsed"))}) {
    if (id.empty()) continue;
    REINS_RETURN_IF_ERROR(c.Exec(
        "UPDATE approvals SET status = $1, decided_by = $2, decided_turn_id = $3, decided_at = $4 "
        "WHERE id = $5 AND session_id = $6 AND status = 'pending'",
        {Text(status), Text(turn.speaker), Text(turn.result.turn_id), Int(turn.created_at_ms), Text(id),
         Text(turn.session_id)},
        what));
  }
  return {};
}

// Clarifications: withdrawn, answered (only a pending one), then opened (superseding
// any other pending one) — in this order, as in SQLite's WriteTurn.
Status RecordClarifications(Connection& c, const TurnRecord& turn, const std::string& what) {
  if (!turn.withdrawn_clarification_id.empty()) {
    REINS_RETURN_IF_ERROR(c.Exec(
        "UPDATE clarifications SET status = 'superseded' WHERE id = $1 AND session_id = $2 AND status = 'pending'",
        {Text(turn.withdrawn_clarification_id), Text(turn.session_id)}, what));
  }
  if (const std::string& id = turn.answered_clarification_id; !id.empty()) {
    REINS_ASSIGN_OR_RETURN(Rows found, c.Exec("SELECT status FROM clarifications WHERE id = $1 AND session_id = $2 FOR UPDATE",
                                              {Text(id), Text(turn.session_id)}, what));
    if (found.size() == 0) return NotFound("clarification '" + id + "' does not exist in session '" + turn.session_id + "'");
    if (const std::string status = found.Str(0, 0); status != "pending") {
      return FailedPrecondition("clarification '" + id + "' is " + status + ", not pending; it cannot be answered");
    }
    REINS_RETURN_IF_ERROR(c.Exec("UPDATE clarifications SET status = 'answered', chosen_option = $1 WHERE id = $2",
                                 {Text(turn.chosen_option_id), Text(id)}, what));
  }
  if (const auto& p = turn.result.clarification) {
    REINS_RETURN_IF_ERROR(c.Exec(
        "UPDATE clarifications SET status = 'superseded' WHERE session_id = $1 AND status = 'pending' AND id <> $2",
        {Text(turn.session_id), Text(p->id)}, what));
    REINS_RETURN_IF_ERROR(c.Exec(
        "INSERT INTO clarifications (id, session_id, turn_id, tool, entity_type, type, question, request_text, status) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending')",
        {Text(p->id), Text(turn.session_id), Text(turn.result.turn_id), Text(p->tool), Text(p->entity_type),
         Text(p->clarification.type), Text(p->clarification.question), Text(p->request_text)},
        what));
    int position = 0;
    for (const ClarificationOption& o : p->clarification.options) {
      REINS_RETURN_IF_ERROR(c.Exec(
          "INSERT INTO clarification_options (clarification_id, position, option_id, title, subtitle, confidence, "
          "metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)",
          {Text(p->id), Int(position++), Text(o.id), Text(o.title), Text(o.subtitle),
           o.confidence ? Param(Json(*o.confidence).dump()) : Null(),  // shortest exact form
           o.metadata.is_null() ? Null() : Text(DumpJson(o.metadata))},
          what));
    }
  }
  return {};
}

// The session this turn begins, already as the turn leaves it. It has no claim yet: a
// turn that ran under one had a session to claim.
Status InsertSession(Connection& c, const TurnRecord& turn, const std::string& what) {
  REINS_RETURN_IF_ERROR(store::CheckBegunSession(turn));
  if (turn.claim_token != 0) return FailedPrecondition(what + ": a turn that begins its session holds no claim on it");
  return store::pg::InsertSession(c, *turn.new_session, DumpJson(turn.session_state), turn.result.turn_number);
}

Status WriteTurn(Connection& c, const TurnRecord& turn, const std::string& what) {
  if (turn.new_session) REINS_RETURN_IF_ERROR(InsertSession(c, turn, what));
  REINS_RETURN_IF_ERROR(InsertTurn(c, turn, what));
  REINS_RETURN_IF_ERROR(InsertInvocations(c, turn, what));
  REINS_RETURN_IF_ERROR(EnqueueDeferred(c, turn, what));
  for (int64_t id : turn.delivered_notices) {
    REINS_RETURN_IF_ERROR(c.Exec("UPDATE notices SET delivered_turn_id = $1 WHERE id = $2 AND delivered_turn_id IS NULL",
                                 {Text(turn.result.turn_id), Int(id)}, what));
  }
  REINS_RETURN_IF_ERROR(RecordApprovals(c, turn, what));
  REINS_RETURN_IF_ERROR(RecordClarifications(c, turn, what));
  // The fence: a turn that ran under a claim commits only while that claim is the
  // session's (it lapsed and another replica took the session otherwise). A session the
  // turn began is written as the turn leaves it, and unclaimed.
  if (!turn.new_session) {
    REINS_ASSIGN_OR_RETURN(Rows session, c.Exec("UPDATE sessions SET state = $1, turn_count = $2 WHERE id = $3 "
                                                "AND ($4 = 0 OR claim_token = $4)",
                                                {Text(DumpJson(turn.session_state)), Int(turn.result.turn_number),
                                                 Text(turn.session_id), Int(turn.claim_token)},
                                                what));
    if (session.affected() != 1) {
      return Aborted(what + ": its claim on the session lapsed and another replica took the session over");
    }
  }
  if (turn.lease_change) {
    // Another writer moved the floor: the error rolls the whole turn back.
    REINS_RETURN_IF_ERROR(
        store::pg::CompareAndSetLease(c, turn.session_id, *turn.lease_change, turn.lease_expected_version));
  }
  return {};
}

}  // namespace

namespace store::pg {

// The CAS, inside the caller's transaction. Under READ COMMITTED the UPDATE re-checks
// `version` on the newest row after waiting for a concurrent writer, so exactly one of
// two writers expecting the same version succeeds, on any replica.
Result<int64_t> CompareAndSetLease(Connection& c, const std::string& session_id, const Lease& lease,
                                   int64_t expected_version) {
  const std::string what = "cannot set the lease of session '" + session_id + "'";
  REINS_ASSIGN_OR_RETURN(Rows updated, c.Exec("UPDATE leases SET owner = $1, domain = $2, expires_at = $3, version = "
                                              "version + 1 WHERE session_id = $4 AND version = $5",
                                              {Text(lease.owner), Text(lease.domain), Int(lease.expires_at_ms),
                                               Text(session_id), Int(expected_version)},
                                              what));
  if (updated.affected() == 1) return expected_version + 1;
  if (expected_version == 0) {
    REINS_ASSIGN_OR_RETURN(Rows inserted, c.Exec("INSERT INTO leases (session_id, owner, domain, expires_at, version) "
                                                 "VALUES ($1, $2, $3, $4, 1) ON CONFLICT (session_id) DO NOTHING",
                                                 {Text(session_id), Text(lease.owner), Text(lease.domain),
                                                  Int(lease.expires_at_ms)},
                                                 what));
    if (inserted.affected() == 1) return int64_t{1};
  }
  return FailedPrecondition("the floor lease of session '" + session_id + "' changed since version " +
                            std::to_string(expected_version));
}

}  // namespace store::pg

Status PostgresStore::CommitTurn(const TurnRecord& turn) {
  const std::string what = "cannot commit turn '" + turn.result.turn_id + "' of session '" + turn.session_id + "'";
  return Call([&](Connection& c) -> Status {
    store::pg::Transaction tx(c, what);
    REINS_RETURN_IF_ERROR(tx.begun());
    REINS_RETURN_IF_ERROR(WriteTurn(c, turn, what));
    return tx.Commit();
  });
}

// The server's clock decides when a claim lapses: replicas' clocks may disagree.
constexpr const char* kServerNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

Result<std::optional<SessionClaim>> PostgresStore::ClaimSession(const std::string& session_id, const std::string& owner,
                                                                int64_t ttl_ms) {
  std::optional<SessionClaim> claim;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    const std::string what = "cannot claim session '" + session_id + "'";
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string("UPDATE sessions SET claim_owner = $2, claim_token = claim_token + 1, "
                                                      "claim_until = ") + kServerNowMs + " + $3 WHERE id = $1 AND "
                                              "(claim_owner IS NULL OR claim_until <= " + kServerNowMs + ") "
                                              "RETURNING claim_token, turn_count",
                                          {Text(session_id), Text(owner), Int(ttl_ms)}, what));
    claim.reset();
    if (r.size() == 1) {
      claim = SessionClaim{r.Int(0, 0), static_cast<int>(r.Int(0, 1))};
      return {};
    }
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    return exists ? OkStatus() : store::SessionNotFound(session_id);
  }));
  return claim;
}

Status PostgresStore::ReleaseSession(const std::string& session_id, int64_t token) {
  return Call([&](Connection& c) -> Status {
    return c.Exec("UPDATE sessions SET claim_owner = NULL WHERE id = $1 AND claim_token = $2",
                  {Text(session_id), Int(token)}, "cannot release session '" + session_id + "'")
        .status();
  });
}

Result<Lease> PostgresStore::LoadLease(const std::string& session_id) {
  Lease lease;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT owner, domain, expires_at, version FROM leases WHERE session_id = $1",
                                          {Text(session_id)}, "cannot load the lease of session '" + session_id + "'"));
    lease = Lease{};
    if (r.size() > 0) {
      lease.owner = r.Str(0, 0);
      lease.domain = r.Str(0, 1);
      lease.expires_at_ms = r.Int(0, 2);
      lease.version = r.Int(0, 3);
    }
    return {};
  }));
  return lease;
}

Result<int64_t> PostgresStore::SetLease(const std::string& session_id, const Lease& lease, int64_t expected_version) {
  int64_t version = 0;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    store::pg::Transaction tx(c, "cannot set the lease of session '" + session_id + "'");
    REINS_RETURN_IF_ERROR(tx.begun());
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    if (!exists) return store::SessionNotFound(session_id);
    REINS_ASSIGN_OR_RETURN(version, store::pg::CompareAndSetLease(c, session_id, lease, expected_version));
    return tx.Commit();
  }));
  return version;
}

}  // namespace reins

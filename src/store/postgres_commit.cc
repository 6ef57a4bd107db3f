// PostgresStore's turn commit (everything a turn produced, in one transaction, fenced
// by the turn's session claim) and the floor lease's compare-and-set inside it (the
// claims and the lease's own calls: postgres_claims.cc). The statements mirror SQLite's (sqlite_commit.cc,
// sqlite_lease.cc). A group commit (CommitTurns) sends its turns' statements in one
// pipeline (pg_pipeline.h), one round trip and one transaction for the batch; a batch
// that fails goes again a turn a transaction, so that the failure is its turn's alone.
#include <algorithm>
#include <string>

#include "domain/json_text.h"
#include "store/pg_connection.h"
#include "store/pg_pipeline.h"
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
using store::pg::Pipeline;
using store::pg::Rows;
using store::pg::Text;

Param Flag(bool value) { return Int(value ? 1 : 0); }

// Where a commit's statements go: run at once on a connection inside the caller's
// transaction (CommitTurn), or queued in a pipeline's segment, which its sync commits
// (CommitTurns). A statement whose outcome the next one depends on needs the connection.
class Statements {
 public:
  explicit Statements(Connection& c) : conn_(&c) {}
  explicit Statements(Pipeline& p) : pipeline_(&p) {}
  Status Write(const char* sql, std::vector<Param> params, const std::string& what) {
    if (pipeline_ != nullptr) {
      pipeline_->Add(sql, std::move(params));
      return {};
    }
    return conn_->Exec(sql, params, what).status();
  }
  Connection* connection() const { return conn_; }  // none in a pipeline

 private:
  Connection* conn_ = nullptr;
  Pipeline* pipeline_ = nullptr;
};

// What failed a commit, as the store's contract names it: the keys check instead of
// extra queries, so an unknown session fails a foreign key.
Status CommitFailure(const TurnRecord& turn, Status failed) {
  if (failed.code() == StatusCode::kFailedPrecondition && failed.message().find("foreign key") != std::string::npos) {
    return store::SessionNotFound(turn.session_id);
  }
  return failed;
}

Status InsertTurn(Statements& s, const TurnRecord& turn, const std::string& what) {
  const TurnResult& r = turn.result;
  store::TurnText text = store::TurnTextOf(turn);
  return s.Write(
      "INSERT INTO turns (id, session_id, number, speaker, status, reply, input, result, error, events, created_at, "
      "messages, idempotency_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
      {Text(r.turn_id), Text(turn.session_id), Int(r.turn_number), Text(turn.speaker), Text(TurnStatusName(r.status)),
       Text(r.reply), Text(text.input), Text(text.result), Text(r.error), Text(text.events), Int(turn.created_at_ms),
       Text(text.messages), text.idempotency_key ? Text(*text.idempotency_key) : Null()},
      what);
}

Status InsertInvocations(Statements& s, const TurnRecord& turn, const std::string& what) {
  for (const ToolOutcome& t : turn.result.tools) {
    const bool enveloped = t.result.has_value();
    REINS_RETURN_IF_ERROR(s.Write(
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
Status EnqueueDeferred(Statements& s, const TurnRecord& turn, const std::string& what) {
  for (const ToolOutcome& t : turn.result.tools) {
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    REINS_RETURN_IF_ERROR(s.Write(
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
    REINS_RETURN_IF_ERROR(s.Write("DELETE FROM outbox WHERE turn_id = $1 AND status = 'staged'",
                                 {Text(turn.result.turn_id)}, what));
  }
  return {};
}

Status RecordApprovals(Statements& s, const TurnRecord& turn, const std::string& what) {
  if (const auto& a = turn.result.approval) {
    REINS_RETURN_IF_ERROR(s.Write(
        "INSERT INTO approvals (id, session_id, turn_id, tool, args, status) VALUES ($1, $2, $3, $4, $5, 'pending')",
        {Text(a->id), Text(turn.session_id), Text(turn.result.turn_id), Text(a->tool), Text(DumpJson(a->args))}, what));
  }
  if (!turn.decided_approval_id.empty()) {
    REINS_RETURN_IF_ERROR(s.Write(
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
    REINS_RETURN_IF_ERROR(s.Write(
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
Status RecordClarifications(Statements& s, const TurnRecord& turn, const std::string& what) {
  if (!turn.withdrawn_clarification_id.empty()) {
    REINS_RETURN_IF_ERROR(s.Write(
        "UPDATE clarifications SET status = 'superseded' WHERE id = $1 AND session_id = $2 AND status = 'pending'",
        {Text(turn.withdrawn_clarification_id), Text(turn.session_id)}, what));
  }
  if (const std::string& id = turn.answered_clarification_id; !id.empty()) {
    Connection& c = *s.connection();  // never pipelined (Pipelined)
    REINS_ASSIGN_OR_RETURN(Rows found, c.Exec("SELECT status FROM clarifications WHERE id = $1 AND session_id = $2 FOR UPDATE",
                                              {Text(id), Text(turn.session_id)}, what));
    if (found.size() == 0) return NotFound("clarification '" + id + "' does not exist in session '" + turn.session_id + "'");
    if (const std::string status = found.Str(0, 0); status != "pending") {
      return FailedPrecondition("clarification '" + id + "' is " + status + ", not pending; it cannot be answered");
    }
    REINS_RETURN_IF_ERROR(s.Write("UPDATE clarifications SET status = 'answered', chosen_option = $1 WHERE id = $2",
                                 {Text(turn.chosen_option_id), Text(id)}, what));
  }
  if (const auto& p = turn.result.clarification) {
    REINS_RETURN_IF_ERROR(s.Write(
        "UPDATE clarifications SET status = 'superseded' WHERE session_id = $1 AND status = 'pending' AND id <> $2",
        {Text(turn.session_id), Text(p->id)}, what));
    REINS_RETURN_IF_ERROR(s.Write(
        "INSERT INTO clarifications (id, session_id, turn_id, tool, entity_type, type, question, request_text, status) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending')",
        {Text(p->id), Text(turn.session_id), Text(turn.result.turn_id), Text(p->tool), Text(p->entity_type),
         Text(p->clarification.type), Text(p->clarification.question), Text(p->request_text)},
        what));
    int position = 0;
    for (const ClarificationOption& o : p->clarification.options) {
      REINS_RETURN_IF_ERROR(s.Write(
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

// A turn whose statements do not depend on each other's outcome: it can go in a
// pipeline. Beginning a session checks the record first, answering a clarification
// reads it, a floor change compares and sets: those commit one at a time.
bool Pipelined(const TurnRecord& turn) {
  return !turn.new_session && turn.answered_clarification_id.empty() && !turn.lease_change;
}

// What a turn writes besides its own row and its session's: its tool calls, deferred
// writes, notices, approvals and clarifications.
Status WriteTurnRecords(Statements& s, const TurnRecord& turn, const std::string& what) {
  REINS_RETURN_IF_ERROR(InsertInvocations(s, turn, what));
  REINS_RETURN_IF_ERROR(EnqueueDeferred(s, turn, what));
  for (int64_t id : turn.delivered_notices) {
    REINS_RETURN_IF_ERROR(s.Write("UPDATE notices SET delivered_turn_id = $1 WHERE id = $2 AND delivered_turn_id IS NULL",
                                  {Text(turn.result.turn_id), Int(id)}, what));
  }
  REINS_RETURN_IF_ERROR(RecordApprovals(s, turn, what));
  return RecordClarifications(s, turn, what);
}

constexpr const char* kClaimLapsed = "its claim on the session lapsed and another replica took the session over";

Status WriteTurn(Statements& s, const TurnRecord& turn, const std::string& what) {
  if (turn.new_session) REINS_RETURN_IF_ERROR(InsertSession(*s.connection(), turn, what));
  REINS_RETURN_IF_ERROR(InsertTurn(s, turn, what));
  REINS_RETURN_IF_ERROR(WriteTurnRecords(s, turn, what));
  // The fence: a turn that ran under a claim commits only while that claim is the
  // session's (it lapsed and another replica took the session otherwise), checked in
  // the statement itself (reins_expect_row raises), so that a pipeline's sync commits
  // nothing else. The same statement ends the claim when nothing of the turn runs after
  // its commit (release_claim). A session the turn began is written as the turn leaves
  // it, and unclaimed.
  if (!turn.new_session) {
    REINS_RETURN_IF_ERROR(s.Write(
        "WITH fenced AS (UPDATE sessions SET state = $1, turn_count = $2, claim_owner = CASE WHEN $6::bool THEN NULL "
        "ELSE claim_owner END WHERE id = $3 AND ($4 = 0 OR claim_token = $4) RETURNING 1) "
        "SELECT reins_expect_row((SELECT count(*) FROM fenced), $5)",
        {Text(DumpJson(turn.session_state)), Int(turn.result.turn_number), Text(turn.session_id),
         Int(turn.claim_token), Text(kClaimLapsed), Text(turn.release_claim ? "t" : "f")},
        what));
  }
  if (turn.lease_change) {
    // Another writer moved the floor: the error rolls the whole turn back.
    REINS_RETURN_IF_ERROR(store::pg::CompareAndSetLease(*s.connection(), turn.session_id, *turn.lease_change,
                                                        turn.lease_expected_version));
  }
  return {};
}

std::string CommitWhat(const TurnRecord& turn) {
  return "cannot commit turn '" + turn.result.turn_id + "' of session '" + turn.session_id + "'";
}

// A batch of pipelined turns as one transaction, its statements over all the turns
// at once where they can be: the turns' rows in one INSERT, each turn's other records,
// then every session's fence in one UPDATE, which raises unless it found each claim.
// (Statements a turn, a transaction a turn, cost the server about a third more CPU.)
void WriteBatch(Pipeline& p, const std::vector<const TurnRecord*>& batch) {
  using store::pg::IntArray;
  using store::pg::TextArray;
  std::vector<Param> ids, sessions, speakers, statuses, replies, inputs, results, errors, events, messages, keys, states,
      releases;
  std::vector<int64_t> numbers, created, tokens;
  for (const TurnRecord* turn : batch) {
    const TurnResult& r = turn->result;
    store::TurnText text = store::TurnTextOf(*turn);
    ids.push_back(r.turn_id);
    sessions.push_back(turn->session_id);
    numbers.push_back(r.turn_number);
    speakers.push_back(turn->speaker);
    statuses.push_back(std::string(TurnStatusName(r.status)));
    replies.push_back(r.reply);
    inputs.push_back(std::move(text.input));
    results.push_back(std::move(text.result));
    errors.push_back(r.error);
    events.push_back(std::move(text.events));
    created.push_back(turn->created_at_ms);
    messages.push_back(std::move(text.messages));
    keys.push_back(std::move(text.idempotency_key));
    states.push_back(DumpJson(turn->session_state));
    tokens.push_back(turn->claim_token);
    releases.push_back(turn->release_claim ? "t" : "f");
  }
  p.Add("INSERT INTO turns (id, session_id, number, speaker, status, reply, input, result, error, events, created_at, "
        "messages, idempotency_key) SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], "
        "$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::text[])",
        {TextArray(ids), TextArray(sessions), IntArray(numbers), TextArray(speakers), TextArray(statuses),
         TextArray(replies), TextArray(inputs), TextArray(results), TextArray(errors), TextArray(events),
         IntArray(created), TextArray(messages), TextArray(keys)});
  for (const TurnRecord* turn : batch) {
    Statements s(p);
    (void)WriteTurnRecords(s, *turn, CommitWhat(*turn));  // only queues
  }
  p.Add("WITH fenced AS (UPDATE sessions SET state = a.state, turn_count = a.number, claim_owner = CASE WHEN a.release "
        "THEN NULL ELSE sessions.claim_owner END FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], "
        "$5::bool[]) AS a(id, state, number, token, release) WHERE sessions.id = a.id AND (a.token = 0 OR "
        "sessions.claim_token = a.token) RETURNING 1) "
        "SELECT reins_expect_row((SELECT (count(*) = $6::bigint)::int FROM fenced), $7)",
        {TextArray(sessions), TextArray(states), IntArray(numbers), IntArray(tokens), TextArray(releases),
         Int(static_cast<int64_t>(batch.size())), Text(kClaimLapsed)});
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
  const std::string what = CommitWhat(turn);
  return CommitFailure(turn, Call([&](Connection& c) -> Status {
    store::pg::Transaction tx(c, what);
    REINS_RETURN_IF_ERROR(tx.begun());
    Statements s(c);
    REINS_RETURN_IF_ERROR(WriteTurn(s, turn, what));
    return tx.Commit();
  }));
}

std::vector<Status> PostgresStore::CommitTurns(const std::vector<const TurnRecord*>& turns) {
  // A round trip's turns at most: their results wait in the socket while the rest is
  // sent, and a blocking send with the server's results unread could wait for ever.
  constexpr size_t kTurnsPerTrip = 64;
  std::vector<Status> out(turns.size());
  std::vector<size_t> piped;
  for (size_t i = 0; i < turns.size(); ++i) {
    if (Pipelined(*turns[i])) {
      piped.push_back(i);
    } else {
      out[i] = CommitTurn(*turns[i]);
    }
  }
  for (size_t from = 0; from < piped.size(); from += kTurnsPerTrip) {
    const size_t to = std::min(from + kTurnsPerTrip, piped.size());
    // First the whole batch as one transaction: a transaction costs the server more
    // than the statements of a turn. When it fails (a turn's claim lapsed, say: rare),
    // nothing of it stayed, and the batch goes again a transaction a turn, so that the
    // failure is that turn's alone.
    auto send = [&](Connection& c, bool together) {
      Pipeline pipeline(c);
      if (together) {
        std::vector<const TurnRecord*> batch;
        for (size_t k = from; k < to; ++k) batch.push_back(turns[piped[k]]);
        WriteBatch(pipeline, batch);
        pipeline.EndSegment("cannot commit " + std::to_string(to - from) + " turns");
        return pipeline.Run();
      }
      for (size_t k = from; k < to; ++k) {
        Statements s(pipeline);
        const TurnRecord& turn = *turns[piped[k]];
        std::string what = CommitWhat(turn);
        (void)WriteTurn(s, turn, what);  // only queues: its outcome is the segment's
        pipeline.EndSegment(std::move(what));
      }
      return pipeline.Run();
    };
    std::vector<Status> got;
    const Status called = Call([&](Connection& c) -> Status {
      got = send(c, to - from > 1);
      if (got.size() == 1 && got.front().ok()) got.assign(to - from, OkStatus());
      if (c.ok() && got.size() != to - from) got = send(c, false);
      // A connection that died idle failed before anything ran: Call tries once more.
      return c.ok() || got.empty() ? OkStatus() : got.front();
    });
    for (size_t k = from; k < to; ++k) {
      const TurnRecord& turn = *turns[piped[k]];
      out[piped[k]] = CommitFailure(turn, got.size() == to - from ? got[k - from] : called);
    }
  }
  return out;
}

}  // namespace reins

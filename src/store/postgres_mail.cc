// PostgresStore's MCP question marks and replica mail (host/mcp_relay.h). Each step of
// a mail (sent, taken, replied, collected, withdrawn) is one statement, whole or not at
// all, and the two that move it from `unread` (Take and Withdraw) are compare-and-sets
// on that stage: the holder takes an answer, or the sender withdraws it, never both.
#include <string>

#include "store/pg_connection.h"
#include "store/postgres_store.h"
#include "store/row_json.h"

namespace reins {

using store::pg::Connection;
using store::pg::Int;
using store::pg::Rows;
using store::pg::Text;

Result<QuestionMark> PostgresStore::MarkQuestion(const std::string& session_id, const QuestionMark& mark) {
  QuestionMark before;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    // (The CTE reads the row as it was before the statement.)
    REINS_ASSIGN_OR_RETURN(
        Rows r, c.Exec("WITH before AS (SELECT replica, asked_at FROM mcp_questions WHERE session_id = $1) "
                       "INSERT INTO mcp_questions (session_id, replica, asked_at) VALUES ($1, $2, $3) "
                       "ON CONFLICT (session_id) DO UPDATE SET replica = EXCLUDED.replica, asked_at = EXCLUDED.asked_at "
                       "RETURNING (SELECT replica FROM before), (SELECT asked_at FROM before)",
                       {Text(session_id), Text(mark.replica), Int(mark.asked_at_ms)},
                       "cannot mark the question of session '" + session_id + "'"));
    before = r.size() == 0 || r.IsNull(0, 0) ? QuestionMark{} : QuestionMark{r.Str(0, 0), r.Int(0, 1)};
    return {};
  }));
  return before;
}

Status PostgresStore::UnmarkQuestion(const std::string& session_id, const std::string& replica) {
  return Call([&](Connection& c) -> Status {
    return c.Exec("DELETE FROM mcp_questions WHERE session_id = $1 AND replica = $2", {Text(session_id), Text(replica)},
                  "cannot unmark the question of session '" + session_id + "'")
        .status();
  });
}

Result<QuestionMark> PostgresStore::QuestionHolder(const std::string& session_id) {
  QuestionMark mark;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT replica, asked_at FROM mcp_questions WHERE session_id = $1",
                                          {Text(session_id)}, "cannot read the question of session '" + session_id + "'"));
    mark = r.size() == 0 ? QuestionMark{} : QuestionMark{r.Str(0, 0), r.Int(0, 1)};
    return {};
  }));
  return mark;
}

Result<int64_t> PostgresStore::SendMail(const std::string& to, const Json& body, int64_t now_ms) {
  int64_t id = 0;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("INSERT INTO replica_mail (recipient, body, sent_at) VALUES ($1, $2, $3) RETURNING id",
                                          {Text(to), Text(store::DumpJson(body)), Int(now_ms)},
                                          "cannot send mail to replica '" + to + "'"));
    id = r.Int(0, 0);
    return {};
  }));
  return id;
}

Result<std::vector<ReplicaMail>> PostgresStore::TakeMail(const std::string& to) {
  std::vector<ReplicaMail> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    out.clear();  // a second run (a connection that died idle) starts over
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("UPDATE replica_mail SET stage = 'taken' WHERE recipient = $1 AND stage = 'unread' "
                                          "RETURNING id, body",
                                          {Text(to)}, "cannot take the mail of replica '" + to + "'"));
    for (int i = 0; i < r.size(); ++i) {
      REINS_ASSIGN_OR_RETURN(Json body, store::ParseStoredJson(r.Str(i, 1), "mail " + r.Str(i, 0)));
      out.push_back(ReplicaMail{r.Int(i, 0), std::move(body)});
    }
    return {};
  }));
  return out;
}

Status PostgresStore::ReplyMail(int64_t id, const Json& reply) {
  return Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("UPDATE replica_mail SET stage = 'replied', reply = $2 WHERE id = $1 AND stage = 'taken'",
                                          {Int(id), Text(store::DumpJson(reply))}, "cannot reply to mail " + std::to_string(id)));
    if (r.affected() == 0) return NotFound("mail " + std::to_string(id) + " was withdrawn by its sender");
    return {};
  });
}

Result<MailState> PostgresStore::CollectMail(int64_t id) {
  MailState state;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    const std::string what = "cannot read mail " + std::to_string(id);
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("DELETE FROM replica_mail WHERE id = $1 AND stage = 'replied' RETURNING reply",
                                          {Int(id)}, what));
    if (r.size() == 1) {
      state.stage = MailState::Stage::kReplied;
      REINS_ASSIGN_OR_RETURN(state.reply, store::ParseStoredJson(r.Str(0, 0), "the reply to mail " + std::to_string(id)));
      return {};
    }
    REINS_ASSIGN_OR_RETURN(Rows s, c.Exec("SELECT stage FROM replica_mail WHERE id = $1", {Int(id)}, what));
    if (s.size() == 0) {
      state.stage = MailState::Stage::kGone;
    } else {
      state.stage = s.Str(0, 0) == "unread" ? MailState::Stage::kUnread : MailState::Stage::kTaken;
    }
    return {};
  }));
  return state;
}

Result<bool> PostgresStore::WithdrawMail(int64_t id) {
  bool withdrawn = false;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("DELETE FROM replica_mail WHERE id = $1 AND stage = 'unread'", {Int(id)},
                                          "cannot withdraw mail " + std::to_string(id)));
    withdrawn = r.affected() == 1;
    return {};
  }));
  return withdrawn;
}

Status PostgresStore::DiscardMail(int64_t id) {
  return Call([&](Connection& c) -> Status {
    return c.Exec("DELETE FROM replica_mail WHERE id = $1", {Int(id)}, "cannot discard mail " + std::to_string(id)).status();
  });
}

Status PostgresStore::SweepMail(int64_t before_ms) {
  return Call([&](Connection& c) -> Status {
    const std::string what = "cannot sweep the replicas' mail";
    REINS_RETURN_IF_ERROR(c.Exec("DELETE FROM replica_mail WHERE sent_at < $1", {Int(before_ms)}, what).status());
    return c.Exec("DELETE FROM mcp_questions WHERE asked_at < $1", {Int(before_ms)}, what).status();
  });
}

}  // namespace reins

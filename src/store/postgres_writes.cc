// PostgresStore's write-ahead record of immediate writes (WriteRecord), as in
// sqlite_writes.cc. A session's turns run on one replica at a time (its claim), so two
// tries of one write never race here; the conditional updates make a late one a no-op.
#include <string>

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
using store::pg::Rows;
using store::pg::Text;

constexpr const char* kWriteColumns =
    "SELECT session_id, write_key, turn_id, tool, args, state, result, attempts, started_at, finished_at FROM writes";

Result<WriteRecord> WriteFromRow(const Rows& r, int i) {
  WriteRecord w;
  w.session_id = r.Str(i, 0);
  w.key = r.Str(i, 1);
  w.turn_id = r.Str(i, 2);
  w.tool = r.Str(i, 3);
  REINS_ASSIGN_OR_RETURN(w.args, store::ParseStoredJson(r.Str(i, 4), "the arguments of write '" + w.key + "'"));
  w.state = kWriteStates.Parse(r.Str(i, 5)).value_or(WriteRecord::State::kUncertain);
  if (!r.IsNull(i, 6)) {
    REINS_ASSIGN_OR_RETURN(w.result, store::ParseStoredJson(r.Str(i, 6), "the result of write '" + w.key + "'"));
  }
  w.attempts = static_cast<int>(r.Int(i, 7));
  w.started_ms = r.Int(i, 8);
  w.finished_ms = r.IsNull(i, 9) ? 0 : r.Int(i, 9);
  return w;
}

}  // namespace

Result<std::optional<WriteRecord>> PostgresStore::BeginWrite(const WriteRecord& intent) {
  const std::string what = "cannot record write '" + intent.key + "' before it runs";
  std::optional<WriteRecord> found;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows added, c.Exec("INSERT INTO writes (session_id, write_key, turn_id, tool, args, state, "
                                              "attempts, started_at) VALUES ($1, $2, $3, $4, $5, 'running', 1, $6) "
                                              "ON CONFLICT (session_id, write_key) DO NOTHING",
                                              {Text(intent.session_id), Text(intent.key), Text(intent.turn_id),
                                               Text(intent.tool), Text(DumpJson(intent.args)), Int(intent.started_ms)},
                                              what));
    if (added.affected() == 1) return {};
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(kWriteColumns) + " WHERE session_id = $1 AND write_key = $2",
                                          {Text(intent.session_id), Text(intent.key)}, what));
    if (r.size() == 0) return Internal("write '" + intent.key + "' is neither new nor recorded");
    REINS_ASSIGN_OR_RETURN(WriteRecord w, WriteFromRow(r, 0));
    found = std::move(w);
    return {};
  }));
  return found;
}

namespace {

// Why an update of a running write touched no row: its outcome is recorded, or it was
// never begun.
Status NoRunningWrite(Connection& c, const WriteRecord& write) {
  REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT 1 FROM writes WHERE session_id = $1 AND write_key = $2",
                                        {Text(write.session_id), Text(write.key)},
                                        "cannot read write '" + write.key + "'"));
  return r.size() > 0 ? store::WriteAlreadyFinished(write.key) : store::WriteNotBegun(write.key);
}

}  // namespace

Status PostgresStore::RetryWrite(const WriteRecord& retry) {
  return Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("UPDATE writes SET attempts = attempts + 1, turn_id = $1 "
                                          "WHERE session_id = $2 AND write_key = $3 AND state = 'running'",
                                          {Text(retry.turn_id), Text(retry.session_id), Text(retry.key)},
                                          "cannot record another try of write '" + retry.key + "'"));
    return r.affected() == 1 ? Status() : NoRunningWrite(c, retry);
  });
}

Status PostgresStore::FinishWrite(const WriteRecord& outcome) {
  return Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(
        Rows r, c.Exec("UPDATE writes SET state = $1, result = $2, finished_at = $3 "
                       "WHERE session_id = $4 AND write_key = $5 AND state = 'running'",
                       {Text(kWriteStates.Name(outcome.state)),
                        outcome.result.is_null() ? Null() : Text(DumpJson(outcome.result)), Int(outcome.finished_ms),
                        Text(outcome.session_id), Text(outcome.key)},
                       "cannot record the outcome of write '" + outcome.key + "'"));
    return r.affected() == 1 ? Status() : NoRunningWrite(c, outcome);
  });
}

Result<std::vector<WriteRecord>> PostgresStore::LoadWrites(const std::string& session_id) {
  std::vector<WriteRecord> out;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec(std::string(kWriteColumns) + " WHERE session_id = $1 ORDER BY started_at",
                                          {Text(session_id)}, "cannot read the writes of session '" + session_id + "'"));
    for (int i = 0; i < r.size(); ++i) {
      REINS_ASSIGN_OR_RETURN(WriteRecord w, WriteFromRow(r, i));
      out.push_back(std::move(w));
    }
    return {};
  }));
  return out;
}

}  // namespace reins

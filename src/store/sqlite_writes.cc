// SqliteStore's write-ahead record of immediate writes (WriteRecord): a row committed
// before the call runs, its outcome once it returns (pipeline/write_ledger.h).
#include "store/row_json.h"
#include "store/sqlite_store.h"
#include "store/sqlite_util.h"

namespace reins {
namespace {

using store::ColumnJson;
using store::DumpJson;
using store::Guarded;

constexpr const char* kWriteColumns =
    "SELECT session_id, write_key, turn_id, tool, args, state, result, attempts, started_at, finished_at FROM writes";

WriteRecord WriteFromRow(SQLite::Statement& q) {
  WriteRecord w;
  w.session_id = q.getColumn(0).getString();
  w.key = q.getColumn(1).getString();
  w.turn_id = q.getColumn(2).getString();
  w.tool = q.getColumn(3).getString();
  w.args = ColumnJson(q.getColumn(4), "the arguments of write '" + w.key + "'");
  w.state = kWriteStates.Parse(q.getColumn(5).getString()).value_or(WriteRecord::State::kUncertain);
  w.result = ColumnJson(q.getColumn(6), "the result of write '" + w.key + "'");
  w.attempts = q.getColumn(7).getInt();
  w.started_ms = q.getColumn(8).getInt64();
  w.finished_ms = q.getColumn(9).isNull() ? 0 : q.getColumn(9).getInt64();
  return w;
}

}  // namespace

Result<std::optional<WriteRecord>> SqliteStore::BeginWrite(const WriteRecord& intent) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot record write '" + intent.key + "' before it runs",
                 [&]() -> Result<std::optional<WriteRecord>> {
    SQLite::Statement& add = statements_->Get(
        "INSERT INTO writes (session_id, write_key, turn_id, tool, args, state, attempts, started_at) "
        "VALUES (?, ?, ?, ?, ?, 'running', 1, ?) ON CONFLICT(session_id, write_key) DO NOTHING");
    add.bind(1, intent.session_id);
    add.bind(2, intent.key);
    add.bind(3, intent.turn_id);
    add.bind(4, intent.tool);
    add.bind(5, DumpJson(intent.args));
    add.bind(6, intent.started_ms);
    if (add.exec() == 1) return std::optional<WriteRecord>();
    SQLite::Statement& find =
        statements_->Get(std::string(kWriteColumns) + " WHERE session_id = ? AND write_key = ?");
    find.bind(1, intent.session_id);
    find.bind(2, intent.key);
    if (!find.executeStep()) return Internal("write '" + intent.key + "' is neither new nor recorded");
    return std::optional<WriteRecord>(WriteFromRow(find));
  });
}

namespace {

// Why an update of a running write touched no row: its outcome is recorded, or it was
// never begun.
Status NoRunningWrite(store::StatementCache& statements, const WriteRecord& write) {
  SQLite::Statement& q = statements.Get("SELECT 1 FROM writes WHERE session_id = ? AND write_key = ?");
  q.bind(1, write.session_id);
  q.bind(2, write.key);
  const bool exists = q.executeStep();
  return exists ? store::WriteAlreadyFinished(write.key) : store::WriteNotBegun(write.key);
}

}  // namespace

Status SqliteStore::RetryWrite(const WriteRecord& retry) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot record another try of write '" + retry.key + "'", [&]() -> Status {
    SQLite::Statement& q = statements_->Get(
        "UPDATE writes SET attempts = attempts + 1, turn_id = ? "
        "WHERE session_id = ? AND write_key = ? AND state = 'running'");
    q.bind(1, retry.turn_id);
    q.bind(2, retry.session_id);
    q.bind(3, retry.key);
    if (q.exec() != 1) return NoRunningWrite(*statements_, retry);
    return {};
  });
}

Status SqliteStore::FinishWrite(const WriteRecord& outcome) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot record the outcome of write '" + outcome.key + "'", [&]() -> Status {
    SQLite::Statement& q = statements_->Get(
        "UPDATE writes SET state = ?, result = ?, finished_at = ? "
        "WHERE session_id = ? AND write_key = ? AND state = 'running'");
    q.bind(1, std::string(kWriteStates.Name(outcome.state)));
    if (outcome.result.is_null()) q.bind(2);
    else q.bind(2, DumpJson(outcome.result));
    q.bind(3, outcome.finished_ms);
    q.bind(4, outcome.session_id);
    q.bind(5, outcome.key);
    if (q.exec() != 1) return NoRunningWrite(*statements_, outcome);
    return {};
  });
}

Result<std::vector<WriteRecord>> SqliteStore::LoadWrites(const std::string& session_id) {
  std::lock_guard lock(mu_);
  store::ResetOnExit reset(*statements_);
  return Guarded("cannot read the writes of session '" + session_id + "'", [&]() -> Result<std::vector<WriteRecord>> {
    SQLite::Statement& q = statements_->Get(std::string(kWriteColumns) + " WHERE session_id = ? ORDER BY started_at");
    q.bind(1, session_id);
    std::vector<WriteRecord> out;
    while (q.executeStep()) out.push_back(WriteFromRow(q));
    return out;
  });
}

}  // namespace reins

#include "store/store_copy.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <array>
#include <filesystem>
#include <memory>
#include <vector>

#include "store/migrations.h"
#include "store/pg_connection.h"
#include "store/pg_migrations.h"
#include "store/sqlite_store.h"

namespace reins::store {
namespace {

// In the order their foreign keys need. Both schemas have the same columns (PostgreSQL
// has a session's claim besides, which starts empty); `id` of the two tables that
// number their rows is left to PostgreSQL's sequence, the rows copied in id order.
struct Table {
  const char* name;
  const char* order_by;
  bool numbered;  // an id the target assigns
};
constexpr std::array kTables = {
    Table{"sessions", "created_at, id", false},
    Table{"turns", "session_id, number", false},
    Table{"tool_invocations", "id", true},
    Table{"clarifications", "rowid", false},
    Table{"clarification_options", "clarification_id, position", false},
    Table{"outbox", "created_at, key", false},
    Table{"notices", "id", true},
    Table{"leases", "session_id", false},
    Table{"approvals", "rowid", false},
    Table{"conversations", "created_at, tenant, digest, session_id", false},
};

Status CopyTable(SQLite::Database& from, pg::Connection& to, const Table& table, int64_t* rows) {
  const std::string what = std::string("cannot copy table ") + table.name;
  try {
    SQLite::Statement read(from, std::string("SELECT * FROM ") + table.name + " ORDER BY " + table.order_by);
    std::vector<int> columns;
    std::string names, placeholders;
    for (int c = 0; c < read.getColumnCount(); ++c) {
      const std::string name = read.getColumnName(c);
      if (table.numbered && name == "id") continue;
      columns.push_back(c);
      names += (names.empty() ? "" : ", ") + name;
      placeholders += (placeholders.empty() ? "$" : ", $") + std::to_string(columns.size());
    }
    const std::string insert = std::string("INSERT INTO ") + table.name + " (" + names + ") VALUES (" + placeholders + ")";
    std::vector<pg::Param> params(columns.size());
    while (read.executeStep()) {
      for (size_t i = 0; i < columns.size(); ++i) {
        SQLite::Column value = read.getColumn(columns[i]);
        params[i] = value.isNull() ? pg::Null() : pg::Text(value.getString());
      }
      REINS_RETURN_IF_ERROR(to.Exec(insert, params, what).status());
      ++*rows;
    }
  } catch (const SQLite::Exception& e) {
    return Internal(what + ": " + e.what());
  }
  return {};
}

}  // namespace

Status CopySqliteToPostgres(const std::string& sqlite_path, const std::string& postgres_url,
                            const std::function<void(const CopyCount&)>& report) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(sqlite_path, ec)) {
    return NotFound("no SQLite store at '" + sqlite_path + "'");
  }
  // Opening the source as a store brings it to the latest schema, which the copy's
  // column lists assume.
  REINS_RETURN_IF_ERROR(SqliteStore::Open(sqlite_path).status());
  std::unique_ptr<SQLite::Database> from;
  try {
    from = std::make_unique<SQLite::Database>(sqlite_path, SQLite::OPEN_READONLY);
  } catch (const SQLite::Exception& e) {
    return Unavailable("cannot open the SQLite store '" + sqlite_path + "': " + e.what());
  }
  REINS_ASSIGN_OR_RETURN(auto parsed, pg::ParseStoreUrl(postgres_url));
  REINS_ASSIGN_OR_RETURN(std::unique_ptr<pg::Connection> to, pg::Connection::Open(parsed.first, parsed.second));
  REINS_RETURN_IF_ERROR(pg::ApplyMigrations(*to));

  const std::string what = "cannot copy the store";
  pg::Transaction tx(*to, what);
  REINS_RETURN_IF_ERROR(tx.begun());
  // Inside the transaction, so a second copy running at once finds the first's rows
  // or waits for them (the primary keys conflict) and fails whole.
  REINS_ASSIGN_OR_RETURN(pg::Rows existing, to->Exec("SELECT COUNT(*) FROM sessions", {}, what));
  if (existing.Int(0, 0) > 0) {
    return FailedPrecondition("the PostgreSQL store already holds " + std::to_string(existing.Int(0, 0)) +
                              " sessions: copy into an empty database");
  }
  std::vector<CopyCount> counts;
  for (const Table& table : kTables) {
    CopyCount count{table.name, 0};
    REINS_RETURN_IF_ERROR(CopyTable(*from, *to, table, &count.rows));
    counts.push_back(count);
  }
  REINS_RETURN_IF_ERROR(tx.Commit());
  for (const CopyCount& count : counts) report(count);
  return {};
}

}  // namespace reins::store

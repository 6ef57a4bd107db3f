// Helpers shared by the SqliteStore sources. Internal to src/store/.
//
// SQLiteCpp reports errors by throwing; inside the store we let it, and Guarded()
// converts every exception into a Status at the public method's edge, so none leaves
// the module.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <stdexcept>
#include <string>

#include "reins/json.h"
#include "reins/status.h"

namespace reins::store {

// A stored row that cannot be read back (corrupt JSON). Never leaves src/store/.
class CorruptRow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Serialises JSON for a TEXT column. Invalid UTF-8 (a model can produce it) is
// replaced rather than thrown on, so a turn is never lost to one bad byte.
std::string DumpJson(const Json& j);

// Reads a JSON column: SQL NULL is JSON null; unparsable text throws CorruptRow
// naming `where`.
Json ColumnJson(const SQLite::Column& column, const std::string& where);

// Maps a SQLite error: constraint violations on keys are AlreadyExists, a busy or
// locked database is Unavailable, anything else Internal. `what` names the operation.
Status StatusFromSqlite(const SQLite::Exception& e, const std::string& what);

bool SessionExists(SQLite::Database& db, const std::string& session_id);
Status SessionNotFound(const std::string& session_id);

// Runs `body` (returning a Result) and turns any exception into an error Status.
template <typename F>
auto Guarded(const std::string& what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    return StatusFromSqlite(e, what);
  } catch (const CorruptRow& e) {
    return Internal(what + ": " + e.what());
  } catch (const std::exception& e) {
    return Internal(what + ": " + e.what());
  }
}

}  // namespace reins::store

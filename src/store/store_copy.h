// Moving a SQLite store's sessions into PostgreSQL (reins migrate --from sqlite:PATH
// --to postgres://...), for a team that outgrows one process. Internal to the CLI.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "reins/status.h"

namespace reins::store {

struct CopyCount {
  std::string table;
  int64_t rows = 0;
};

// Copies every row of every table of the SQLite database at `sqlite_path` (brought to
// the latest schema first) into the PostgreSQL database at `postgres_url` (likewise),
// in one transaction: all of it or nothing. The target must hold no sessions yet, and
// the source should not be in use (stop the process that serves it first). `report` is
// told each table's count once the copy committed.
Status CopySqliteToPostgres(const std::string& sqlite_path, const std::string& postgres_url,
                            const std::function<void(const CopyCount&)>& report);

}  // namespace reins::store

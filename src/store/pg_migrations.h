// Versioned schema migrations for the PostgreSQL store (see migrations.h for SQLite's).
// The version lives in the table reins_schema; steps are applied under an advisory
// lock, so replicas that start together apply each step exactly once.
#pragma once

#include "reins/status.h"
#include "store/pg_connection.h"

namespace reins::store::pg {

// The schema version this build writes.
int LatestSchemaVersion();

// Applies the missing steps, each in its own transaction. A database newer than this
// build is refused (FailedPrecondition).
Status ApplyMigrations(Connection& conn);

}  // namespace reins::store::pg

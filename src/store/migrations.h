// Versioned schema migrations for the SQLite store.
//
// The schema version lives in `PRAGMA user_version`. Migrations are an ordered list;
// step i brings a database from version i to version i+1. Steps are append-only: a
// released step is never edited, a change to the schema is a new step.
#pragma once

#include "reins/status.h"

namespace SQLite {
class Database;
}  // namespace SQLite

namespace reins::store {

// The schema version this build writes: the number of migration steps.
int LatestSchemaVersion();

// Applies the missing steps, each in its own transaction, so a failure leaves the
// database at the last complete version. A database newer than this build is refused
// (FailedPrecondition): older code would misread or corrupt it.
Status ApplyMigrations(SQLite::Database& db);

}  // namespace reins::store

// Helpers shared by PostgresStore's sources. Internal to src/store/.
#pragma once

#include <cstdint>
#include <string>

#include "reins/store.h"
#include "store/pg_connection.h"

namespace reins::store::pg {

inline constexpr const char* kTurnColumns =
    "SELECT id, number, speaker, status, reply, created_at, input, result, events FROM turns";

Result<bool> SessionExists(Connection& c, const std::string& session_id);
// The lease compare-and-set, inside the caller's transaction (postgres_commit.cc).
Result<int64_t> CompareAndSetLease(Connection& c, const std::string& session_id, const Lease& lease,
                                   int64_t expected_version);
// A row selected with kTurnColumns.
Result<StoredTurn> TurnFromRow(const Rows& r, int i);

}  // namespace reins::store::pg

// Helpers shared by PostgresStore's sources. Internal to src/store/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reins/store.h"
#include "store/pg_connection.h"

namespace reins::store::pg {

inline constexpr const char* kTurnColumns =
    "SELECT id, number, speaker, status, reply, created_at, input, result, events FROM turns";

Result<bool> SessionExists(Connection& c, const std::string& session_id);
// Inserts `session` with `state` (JSON text) and `turn_count` in place of its own:
// CreateSession's new session, or the one a turn begins, as the turn leaves it.
// AlreadyExists when a session has its id.
Status InsertSession(Connection& c, const SessionRecord& session, const std::string& state, int turn_count);
// The lease compare-and-set, inside the caller's transaction (postgres_commit.cc).
Result<int64_t> CompareAndSetLease(Connection& c, const std::string& session_id, const Lease& lease,
                                   int64_t expected_version);
// The parameters every insert into the outbox takes, in this order: key, session_id,
// turn_id, tool, args, mode ($1-$6), created_at and updated_at both `at_ms` ($7),
// step_id ($8). The turn's commit and a streamed reply's staging share it.
std::vector<Param> OutboxRowParams(const std::string& key, const std::string& session_id, const std::string& turn_id,
                                   const std::string& tool, const Json& args, DeferredMode mode, int64_t at_ms,
                                   const std::string& step_id);
// A row selected with kTurnColumns.
Result<StoredTurn> TurnFromRow(const Rows& r, int i);

}  // namespace reins::store::pg

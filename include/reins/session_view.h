// SessionView: the read side of a runtime's sessions, for those who show them (the
// HTTP API's session, trace and replay endpoints, metrics). It reads through the
// runtime's store and judges time by the runtime's clock, so that a server needs
// neither a store handle nor a clock of its own. Reads only: every write goes through
// Runtime::RunTurn and Runtime::CreateSession.
//
// Threading: a store is safe to call from any thread (reins/store.h), so a
// view may be used off the runtime's executor, e.g. to read long traces.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "reins/clock.h"
#include "reins/json.h"
#include "reins/status.h"
#include "reins/store.h"

namespace reins {

// What a session is now (GET /v1/sessions/{id}).
struct SessionSummary {
  std::string id;
  std::string tenant;
  int64_t created_at_ms = 0;
  int turn_count = 0;
  Json metadata = Json::object();
  std::optional<Lease> lease;      // only while it is active
  Json pending_clarification;      // null when none
  Json pending_approval;           // null when none, or once it lapsed (the API's approval payload)
  // The tools the person allowed for the rest of the session (approval.remember):
  // [{tool, by, turn, at}], oldest first.
  Json remembered_approvals = Json::array();
  std::string last_status;         // the last turn's status; "" before the first turn (Recent only)
  std::string opened_by;           // the first turn's speaker (Recent only)
  Json opened_with;                // the first turn's input; null before it (Recent only)
};

// Turns with the tool calls they made, as stored.
struct StoredTrace {
  std::vector<StoredTurn> turns;
  std::vector<StoredInvocation> invocations;
};

class SessionView {
 public:
  SessionView(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

  // NotFound when there is no such session (for these two).
  Result<SessionSummary> Describe(const std::string& session_id) const;
  // The newest `limit` sessions of one tenant (of all with nullopt), newest first, each
  // described, with its last turn's status: the trace viewer's list.
  Result<std::vector<SessionSummary>> Recent(const std::optional<std::string>& tenant, int limit) const;
  Result<std::string> TenantOf(const std::string& session_id) const;
  // A session's tenant never changes, so it is remembered once read or created: the
  // tenant check runs on every request to a session. nullopt when not remembered.
  std::optional<std::string> KnownTenant(const std::string& session_id) const;
  void RememberTenant(const std::string& session_id, const std::string& tenant) const;
  Result<StoredTrace> Trace(const std::string& session_id, TurnRange range) const;
  // The turn that used `idempotency_key` (with its calls), nullopt when none did.
  Result<std::optional<StoredTrace>> TurnByKey(const std::string& session_id, const std::string& idempotency_key) const;
  // Sessions of one tenant, or of all with nullopt.
  Result<int64_t> CountSessions(const std::optional<std::string>& tenant) const;
  // Deferred calls not yet finished (a probe of the store, too).
  Result<int64_t> OutboxDepth() const;
  int64_t NowMs() const { return clock_.NowMs(); }

 private:
  Result<SessionSummary> Summarize(SessionRecord s) const;

  Store& store_;
  const Clock& clock_;
  // Bounded by forgetting all at kMaxTenants: a forgotten tenant is read again. Each
  // session points at its tenant's name, kept once in tenant_names_ (a copy of the
  // name with each session took 24 bytes more of every session remembered).
  static constexpr size_t kMaxTenants = 16384;
  mutable std::mutex tenants_mu_;
  mutable std::unordered_set<std::string> tenant_names_;
  mutable std::unordered_map<std::string, const std::string*> tenants_;
};

}  // namespace reins

#include "reins/session_view.h"

#include "policy/approval/standing_permissions.h"
#include "turn/session_state.h"

namespace reins {
namespace {

// The session state keeps what is pending under these keys (turn/session_state.h).
Json Pending(const Json& state, const char* key) {
  return state.is_object() && state.contains(key) ? state[key] : Json();
}

}  // namespace

Result<SessionSummary> SessionView::Describe(const std::string& session_id) const {
  REINS_ASSIGN_OR_RETURN(SessionRecord s, store_.LoadSession(session_id));
  return Summarize(std::move(s));
}

Result<std::vector<SessionSummary>> SessionView::Recent(const std::optional<std::string>& tenant, int limit) const {
  REINS_ASSIGN_OR_RETURN(std::vector<RecentSession> recent, store_.RecentSessions(tenant, limit));
  std::vector<SessionSummary> out;
  for (RecentSession& r : recent) {
    REINS_ASSIGN_OR_RETURN(SessionSummary summary, Summarize(std::move(r.session)));
    summary.last_status = std::move(r.last_status);
    summary.opened_by = std::move(r.first_speaker);
    summary.opened_with = std::move(r.first_input);
    out.push_back(std::move(summary));
  }
  return out;
}

Result<SessionSummary> SessionView::Summarize(SessionRecord s) const {
  const std::string session_id = s.id;
  SessionSummary out;
  out.id = s.id;
  out.tenant = s.tenant;
  out.created_at_ms = s.created_at_ms;
  out.turn_count = s.turn_count;
  out.metadata = std::move(s.metadata);
  REINS_ASSIGN_OR_RETURN(Lease lease, store_.LoadLease(session_id));
  if (lease.ActiveAt(clock_.NowMs())) out.lease = std::move(lease);
  out.pending_clarification = Pending(s.state, "pending_clarification");
  const SessionState state = SessionState::FromJson(s.state);
  // A lapsed approval is withdrawn by the session's next turn, on whichever replica.
  if (state.pending_approval && !state.pending_approval->LapsedAt(clock_.NowMs())) {
    out.pending_approval = PendingApprovalToJson(*state.pending_approval);
  }
  for (const StandingPermission& p : StandingPermissions(state)) {
    out.remembered_approvals.push_back({{"tool", p.tool}, {"by", p.by}, {"turn", p.turn}, {"at", FormatIsoTime(p.at_ms)}});
  }
  return out;
}

Result<std::string> SessionView::TenantOf(const std::string& session_id) const {
  if (std::optional<std::string> known = KnownTenant(session_id)) return *std::move(known);
  REINS_ASSIGN_OR_RETURN(std::string tenant, store_.LoadTenant(session_id));
  RememberTenant(session_id, tenant);
  return tenant;
}

std::optional<std::string> SessionView::KnownTenant(const std::string& session_id) const {
  std::lock_guard lock(tenants_mu_);
  auto it = tenants_.find(session_id);
  if (it == tenants_.end()) return std::nullopt;
  return *it->second;
}

void SessionView::RememberTenant(const std::string& session_id, const std::string& tenant) const {
  std::lock_guard lock(tenants_mu_);
  if (tenants_.size() >= kMaxTenants) {
    tenants_.clear();
    tenant_names_.clear();
  }
  tenants_.emplace(session_id, &*tenant_names_.insert(tenant).first);
}

Result<StoredTrace> SessionView::Trace(const std::string& session_id, TurnRange range) const {
  StoredTrace out;
  REINS_ASSIGN_OR_RETURN(out.turns, store_.LoadTurns(session_id, range));
  REINS_ASSIGN_OR_RETURN(out.invocations, store_.LoadInvocations(session_id, range));
  return out;
}

Result<std::optional<StoredTrace>> SessionView::TurnByKey(const std::string& session_id,
                                                          const std::string& idempotency_key) const {
  REINS_ASSIGN_OR_RETURN(std::optional<StoredTurn> turn, store_.FindTurnByKey(session_id, idempotency_key));
  if (!turn) return std::optional<StoredTrace>();
  const TurnRange only{turn->turn_number - 1, 1};
  StoredTrace out;
  REINS_ASSIGN_OR_RETURN(out.invocations, store_.LoadInvocations(session_id, only));
  out.turns.push_back(std::move(*turn));
  return std::optional<StoredTrace>(std::move(out));
}

Result<int64_t> SessionView::CountSessions(const std::optional<std::string>& tenant) const {
  return store_.CountSessions(tenant);
}

Result<int64_t> SessionView::OutboxDepth() const {
  REINS_ASSIGN_OR_RETURN(std::vector<OutboxEntry> unfinished, store_.UnfinishedOutbox());
  return static_cast<int64_t>(unfinished.size());
}

}  // namespace reins

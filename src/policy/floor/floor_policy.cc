#include "policy/floor/floor_policy.h"

#include "policy/rails/rail_text.h"

namespace reins {

AdmitVerdict DecideAdmission(const Lease& lease, const std::string& speaker, const std::string& text, int64_t now_ms,
                             const std::vector<std::unique_ptr<RE2>>& cancel_patterns) {
  if (!lease.ActiveAt(now_ms)) return AdmitVerdict::Admit();
  if (speaker != lease.owner) {
    return AdmitVerdict::Block("floor held by " + lease.owner + " (" + lease.domain + ") until " +
                               FormatIsoTime(lease.expires_at_ms));
  }
  if (AnyMatches(cancel_patterns, text)) return AdmitVerdict::Cancel();
  return AdmitVerdict::Admit();
}

FloorPolicy::FloorPolicy(const AgentConfig& config) : config_(config) {
  Json patterns = Json::array();
  for (const std::string& p : config.floor.cancel_patterns) patterns.push_back(p);
  cancel_patterns_ = CompilePatterns(patterns);
}

AdmitVerdict FloorPolicy::Admit(TurnContext& ctx) const {
  // Stale: it waited behind other turns for too long; replaying it now would answer a
  // moment that has passed (seed 002's "stale deferred turns").
  if (ctx.waited_ms > config_.floor.max_queue_age_ms) {
    return AdmitVerdict::Stale("stale: waited " + std::to_string(ctx.waited_ms) + " ms in the queue (max " +
                               std::to_string(config_.floor.max_queue_age_ms) + " ms)");
  }
  int64_t now = ctx.clock.NowMs();
  const Lease& lease = ctx.lease();
  if (!lease.owner.empty() && !lease.ActiveAt(now)) {
    ctx.Emit("lease.expired", {{"owner", lease.owner}, {"domain", lease.domain}});
  }
  AdmitVerdict verdict = DecideAdmission(lease, ctx.input.speaker, ctx.input.say.value_or(""), now, cancel_patterns_);
  if (verdict.kind == AdmitVerdict::Kind::kAdmit && lease.ActiveAt(now) && config_.floor.owner_note) {
    ctx.extend().system_notes.push_back("Floor: " + lease.owner + " holds the floor for " + lease.domain + " until " +
                                        FormatIsoTime(lease.expires_at_ms) + "; you are answering " + lease.owner +
                                        "'s follow-up.");
  }
  return verdict;
}

void FloorPolicy::Observe(TurnContext& ctx, const ProposedCall& call, const ResultEnvelope& result) const {
  if (result.lease) {
    ctx.Slot<FloorTurn>().request = *result.lease;
  } else if (result.next_action == NextAction::kClarificationNeeded && call.tool != nullptr && call.tool->lease) {
    ctx.Slot<FloorTurn>().request = LeaseRequest{call.tool->lease->first, call.tool->lease->second};
  }
}

void FloorPolicy::OnTurnEnd(TurnContext& ctx) const {
  int64_t now = ctx.clock.NowMs();
  if (const std::optional<LeaseRequest>& request = ctx.Slot<FloorTurn>().request) {
    int ttl_s = request->ttl_s > 0 ? request->ttl_s : config_.floor.default_ttl_s;
    ctx.ChangeLease(Lease{ctx.input.speaker, request->domain, now + int64_t{ttl_s} * 1000, 0});
    ctx.Emit("lease.opened", {{"owner", ctx.input.speaker},
                              {"domain", request->domain},
                              {"expires_at", FormatIsoTime(ctx.lease_change()->expires_at_ms)}});
    return;
  }
  // The owner's follow-up completed: the floor is free again.
  const Lease& lease = ctx.lease();
  if (lease.ActiveAt(now) && lease.owner == ctx.input.speaker && ctx.result.status == TurnStatus::kCompleted) {
    ctx.ChangeLease(Lease{});  // (`lease` is still the one held when the turn began)
    ctx.Emit("lease.released", {{"owner", lease.owner}, {"domain", lease.domain}, {"reason", "resolved"}});
  }
}

}  // namespace reins

// FloorPolicy (seed 002, I6): in a session where several people speak, a tool that
// needs a follow-up from one person gives that person the floor, a lease
// {owner, domain, expires_at}. While it is active the admission gate, the first stage
// of every turn, lets only the owner through; anyone else's turn is recorded as blocked
// and reaches neither the model nor a tool. The owner saying stop/cancel ends the lease
// and the pending clarification without a model call. An expired lease admits everyone.
//
// A lease opens when a may_clarify tool with a `lease` policy asks for clarification,
// or when a result envelope carries `lease`; it closes when the owner's follow-up turn
// completes, on cancel, or on expiry. The owner note in the model's context is the
// soft layer; the gate is the guarantee.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "turn/policy.h"

namespace reins {

// The gate's decision table, a pure function so it can be tested row by row:
//   no lease, or expired         -> admit
//   owner says a cancel phrase   -> cancel
//   owner                        -> admit
//   anyone else (cancel or not)  -> block
AdmitVerdict DecideAdmission(const Lease& lease, const std::string& speaker, const std::string& text, int64_t now_ms,
                             const std::vector<std::unique_ptr<RE2>>& cancel_patterns);

// The floor's state in a turn: a result or a tool asked for the floor (opened at the
// turn's end).
struct FloorTurn {
  std::optional<LeaseRequest> request;
};

class FloorPolicy final : public Policy {
 public:
  explicit FloorPolicy(const AgentConfig& config);
  std::string_view Name() const override { return "floor"; }
  AdmitVerdict Admit(TurnContext& ctx) const override;
  void Observe(TurnContext& ctx, const ProposedCall& call, const ResultEnvelope& result) const override;
  void OnTurnEnd(TurnContext& ctx) const override;

 private:
  const AgentConfig& config_;
  std::vector<std::unique_ptr<RE2>> cancel_patterns_;
};

}  // namespace reins

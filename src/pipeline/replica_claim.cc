#include "pipeline/replica_claim.h"

namespace reins {

ReplicaClaim::~ReplicaClaim() {
  // A release that fails leaves the claim to lapse at its expiry: later turns of the
  // session wait until then, nothing is lost.
  if (store_ != nullptr) (void)store_->ReleaseSession(session_id_, claim_.token);
}

Task<Result<ReplicaClaim>> ClaimForTurn(Store& store, Clock& clock, const std::string& session_id,
                                        const std::string& owner, int64_t ttl_ms, int64_t wait_ms) {
  if (!store.shared()) co_return ReplicaClaim();
  constexpr int64_t kPollMs = 20;
  for (int64_t waited = 0;; waited += kPollMs) {
    REINS_CO_ASSIGN_OR_RETURN(std::optional<SessionClaim> claim, store.ClaimSession(session_id, owner, ttl_ms));
    if (claim) co_return ReplicaClaim(&store, session_id, *claim);
    if (waited >= wait_ms) {
      co_return Unavailable("session '" + session_id + "' is running a turn on another replica for longer than " +
                            std::to_string(wait_ms) + " ms; try again");
    }
    co_await clock.Sleep(kPollMs);
  }
}

}  // namespace reins

#include "pipeline/replica_claim.h"

#include <chrono>
#include <thread>

namespace reins {

void OwedReleases::Add(std::string session_id, int64_t token) {
  std::lock_guard lock(mu_);
  owed_.emplace_back(std::move(session_id), token);
}

void OwedReleases::Retry(Store& store) {
  std::vector<std::pair<std::string, int64_t>> owed;
  {
    std::lock_guard lock(mu_);
    owed.swap(owed_);
  }
  for (auto& [session_id, token] : owed) {
    if (!store.ReleaseSession(session_id, token).ok()) Add(std::move(session_id), token);
  }
}

namespace {

// How long a release that finds the store unreachable is tried again, on the store's
// thread (nobody waits for it), with StoreCalls' back-off, before it is owed: a
// database restart takes a few seconds, and until the release lands every other
// replica's turn of the session waits on the claim.
constexpr int64_t kReleaseRetryMs = 10000;

Status ReleaseWithin(Store& store, const std::string& session_id, int64_t token) {
  Status released = store.ReleaseSession(session_id, token);
  for (int64_t wait = kFirstRetryWaitMs, waited = 0;
       released.code() == StatusCode::kUnavailable && waited < kReleaseRetryMs;
       waited += wait, wait = NextRetryWaitMs(wait)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
    released = store.ReleaseSession(session_id, token);
  }
  return released;
}

}  // namespace

ReplicaClaim::~ReplicaClaim() {
  // A release that fails is tried again for a while (ReleaseWithin), then owed:
  // retried before the next claim, and at worst the claim lapses at its expiry. Later
  // turns of the session wait until then; nothing is lost.
  if (calls_ == nullptr) return;
  calls_->Post([owed = owed_, session_id = std::move(session_id_), token = claim_.token](Store& store) {
    if (!ReleaseWithin(store, session_id, token).ok() && owed != nullptr) owed->Add(session_id, token);
  });
}

Task<Result<ReplicaClaim>> ClaimForTurn(ClaimQueue& claims, StoreCalls& calls, Clock& clock, OwedReleases& owed,
                                        const std::string& session_id, const std::string& owner, int64_t ttl_ms,
                                        int64_t wait_ms) {
  if (!calls.store().shared()) co_return ReplicaClaim();
  const ClaimRequest ask{session_id, owner, ttl_ms};
  constexpr int64_t kPollMs = 20;
  for (int64_t waited = 0;; waited += kPollMs) {
    REINS_CO_ASSIGN_OR_RETURN(std::optional<SessionClaim> claim, co_await claims.Claim(ask));
    if (claim) co_return ReplicaClaim(&calls, &owed, session_id, *claim);
    if (waited >= wait_ms) {
      co_return Unavailable("session '" + session_id + "' is running a turn on another replica for longer than " +
                            std::to_string(wait_ms) + " ms; try again");
    }
    co_await clock.Sleep(kPollMs);
  }
}

}  // namespace reins

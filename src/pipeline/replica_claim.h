// Turns of one session across replicas (a shared store, docs/deployment.md): before a turn
// runs, its replica claims the session in the store; the claim's token fences the
// turn's commit and its version tells whether this replica's cached copy of the session
// is current. Inside one process the SessionQueue already orders a session's turns;
// the claim orders them between processes, without holding a database connection or
// lock while the model and the tools work.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/store_batch.h"
#include "pipeline/store_calls.h"
#include "reins/async.h"
#include "reins/clock.h"
#include "reins/store.h"

namespace reins {

// Claims whose release failed because the store was unreachable (a database restart):
// released again before this process takes its next claim, so the sessions do not stay
// claimed until their claims lapse. A release of a token that is no longer the
// session's does nothing, so a late one is harmless.
class OwedReleases {
 public:
  void Add(std::string session_id, int64_t token);
  void Retry(Store& store);

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, int64_t>> owed_;
};

// The claims that turns ask for in one pass of an event loop, taken in one call
// (Store::ClaimSessions: one statement on PostgreSQL), after any owed releases.
class ClaimQueue {
 public:
  ClaimQueue(StoreCalls& calls, OwedReleases& owed)
      : batch_(calls, [&owed](Store& store, const std::vector<const ClaimRequest*>& asks) {
          owed.Retry(store);
          return store.ClaimSessions(asks);
        }) {}

  Task<Result<std::optional<SessionClaim>>> Claim(const ClaimRequest& ask) { return batch_.Call(ask); }

 private:
  StoreBatch<ClaimRequest, Result<std::optional<SessionClaim>>> batch_;
};

// A held claim, released when destroyed (after the turn's deferred calls ran; the
// release runs on the store's threads, nobody waits for it) unless the turn's commit
// ended it (TurnRecord::release_claim). Empty (token 0) when the store is not shared.
class ReplicaClaim {
 public:
  ReplicaClaim() = default;
  ReplicaClaim(StoreCalls* calls, OwedReleases* owed, std::string session_id, SessionClaim claim)
      : calls_(calls), owed_(owed), session_id_(std::move(session_id)), claim_(claim) {}
  ReplicaClaim(ReplicaClaim&& other) noexcept
      : calls_(std::exchange(other.calls_, nullptr)),
        owed_(other.owed_),
        session_id_(std::move(other.session_id_)),
        claim_(other.claim_) {}
  ReplicaClaim& operator=(ReplicaClaim&&) = delete;
  ~ReplicaClaim();

  int64_t token() const { return claim_.token; }
  // The session's turn count when the claim was taken: its version in the store.
  int turn_count() const { return claim_.turn_count; }
  // Whether the session had an undelivered notice when the claim was taken (any
  // replica's); true for an empty claim, which read nothing.
  bool notices() const { return claim_.notices; }
  bool held() const { return calls_ != nullptr; }
  // The turn's commit ended the claim: nothing is left to release.
  void EndedByCommit() { calls_ = nullptr; }

 private:
  StoreCalls* calls_ = nullptr;
  OwedReleases* owed_ = nullptr;
  std::string session_id_;
  SessionClaim claim_;
};

// Claims `session_id` for one turn (through `claims`, with the others of this pass),
// waiting (polling every 20 ms) while another replica's turn holds it, up to
// `wait_ms`; Unavailable after that. The claim lapses after `ttl_ms` if this process
// dies holding it. An empty claim when the store is not shared.
Task<Result<ReplicaClaim>> ClaimForTurn(ClaimQueue& claims, StoreCalls& calls, Clock& clock, OwedReleases& owed,
                                        const std::string& session_id, const std::string& owner, int64_t ttl_ms,
                                        int64_t wait_ms);

}  // namespace reins

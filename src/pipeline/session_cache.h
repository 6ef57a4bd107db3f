// SessionCache: the runtime's copies of its sessions between turns, the least recently
// used evicted past a bound, beside the sessions whose first turn is running (not in the
// store until that turn's commit writes them). Thread-safe: turns on every event loop
// and the deferred calls' executors use it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "reins/store.h"
#include "turn/session_history.h"
#include "turn/session_state.h"

namespace reins {

// What a session needs between turns, cached after the first load from the store.
struct CachedSession {
  SessionState state;
  // The messages a model call may still see, and their kept request text.
  SessionHistory history;
  int turn_count = 0;
  // False once we know the session has no undelivered notice; a deferred failure
  // recorded by this runtime sets it again (from the deferred call's executor, while a
  // turn of the session may run on its own). Saves a query on almost every turn.
  std::atomic<bool> may_have_notices{true};
  // Turns older than `history` exist but no model call can include them any more.
  bool older_left_out = false;
  // A turn on it ended neither committed nor rolled back (its coroutines were destroyed
  // mid-way, their io_context gone): what it holds may differ from the store, and the
  // next turn reads the session again. Set before that turn can start (the session's
  // queue lets it go after).
  bool unsettled = false;
  // A session begun by the turn now running (Runtime::StartSession), not in the store
  // until that turn's commit writes it.
  std::unique_ptr<SessionRecord> unwritten;

  // Keeps only the history a model call may still see (ReachableStart).
  void Trim(size_t max_context_chars);
  // Reads a session from the store: its state and the newest turns' messages a model
  // call may still see, a page at a time (a long session costs what its window costs,
  // not its length).
  static Result<std::shared_ptr<CachedSession>> Read(Store& store, const std::string& session_id, size_t max_chars);
};

class SessionCache {
 public:
  explicit SessionCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  // The cached session; null when it is not cached, or when a turn on it was abandoned
  // (CachedSession::unsettled), so that it is read from the store again.
  std::shared_ptr<CachedSession> Find(const std::string& session_id);
  // Caches `session` (or keeps the copy already cached, which it returns), evicting the
  // least recently used beyond the bound.
  std::shared_ptr<CachedSession> Remember(const std::string& session_id, std::shared_ptr<CachedSession> session);
  // Drops the cached copy when another replica has moved the session on since
  // (`turn_count` is its version in the store).
  void ForgetIfStale(const std::string& session_id, int turn_count);
  // A session begun by the turn about to run, out of the LRU's reach until Settle: one
  // evicted before its turn commits would exist nowhere.
  void HoldUnwritten(const std::string& session_id, std::shared_ptr<CachedSession> session);
  // The turn that began it ended: committed, it is in the store and cached (Remember);
  // otherwise it exists nowhere.
  void Settle(const std::string& session_id);
  // A notice was recorded for the session: its next turn looks for it.
  void MayHaveNotices(const std::string& session_id);
  size_t size() const;

 private:
  std::shared_ptr<CachedSession> Touch(const std::string& session_id);
  void Forget(const std::string& session_id);

  const size_t capacity_;
  mutable std::mutex mu_;  // guards the three below
  // Least recently used first. A turn holds its own reference, so evicting a session
  // that is running a turn is safe: its next turn reads it again from the store.
  std::list<std::pair<std::string, std::shared_ptr<CachedSession>>> lru_;
  // Keyed by a view of the id its LRU entry holds (list nodes stay where they are): one
  // copy of the id per cached session, not two (a 48-byte block each).
  std::unordered_map<std::string_view, decltype(lru_)::iterator> sessions_;
  std::unordered_map<std::string, std::shared_ptr<CachedSession>> unwritten_;
};

}  // namespace reins

// Store calls off the event loop. A shared store (PostgreSQL) answers over the network
// and each call blocks for a round trip or more, so its calls run on threads of their
// own while the coroutine that made them waits: the thread that serves HTTP and runs
// turns never blocks on the database, and the store's connections, not that thread,
// bound how many calls run at once. A one-process store (SQLite) answers from memory
// and the page cache in microseconds; its calls run inline, where a hop to another
// thread would cost more than the call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "reins/async.h"
#include "reins/clock.h"
#include "reins/store.h"

namespace reins {

// The back-off between tries of a store call that found the store unreachable (a
// database restarting): 50 ms doubling up to 2 s.
inline constexpr int64_t kFirstRetryWaitMs = 50;
inline constexpr int64_t kMaxRetryWaitMs = 2000;
inline int64_t NextRetryWaitMs(int64_t wait) { return std::min(2 * wait, kMaxRetryWaitMs); }

class StoreCalls {
 public:
  // `threads` 0: every call inline.
  StoreCalls(Store& store, int threads);
  ~StoreCalls();  // waits for calls still running (releases posted at a turn's end)
  StoreCalls(const StoreCalls&) = delete;
  StoreCalls& operator=(const StoreCalls&) = delete;

  Store& store() const { return store_; }
  // Whether calls run on the store's threads (a shared store) rather than inline.
  bool offloaded() const { return pool_ != nullptr; }

  // Runs `call` on the store's threads and resumes on the caller's executor (inline
  // when calls are not offloaded). `call` must touch nothing but the store and what
  // it captured for itself: the caller's other state may change meanwhile.
  template <typename T>
  Task<T> Run(std::function<T(Store&)> call) {
    if (!pool_) co_return call(store_);
    std::optional<T> out;
    std::function<void()> work = [&out, &call, this] { out.emplace(call(store_)); };
    co_await Away(std::move(work));
    co_return std::move(*out);
  }
  // Run, tried again with back-off (kFirstRetryWaitMs..kMaxRetryWaitMs, on `clock`) for
  // as long as it answers Unavailable: for what must land once the store is back (a
  // write's outcome, which a sweep would otherwise run again).
  template <typename T>
  Task<T> RunUntilReachable(std::function<T(Store&)> call, Clock& clock) {
    for (int64_t wait = kFirstRetryWaitMs;; wait = NextRetryWaitMs(wait)) {
      std::function<T(Store&)> once = call;
      T answer = co_await Run(std::move(once));
      if (ToStatus(answer).code() != StatusCode::kUnavailable) co_return answer;
      co_await clock.Sleep(wait);
    }
  }
  // Runs `call` later with nobody waiting for it (inline now when not offloaded).
  void Post(std::function<void(Store&)> call);

 private:
  struct Pool;
  Task<void> Away(std::function<void()> work);

  Store& store_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace reins

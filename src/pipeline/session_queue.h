// SessionQueue: turns of one session run one at a time, in arrival order. A turn
// waits (holding no thread) until the turn before it has finished.
//
// Threading: safe from any executor. Sessions on different strands take the queue's
// mutex only to look at their line (never across a wait); a waiting turn is woken on
// its own executor.
#pragma once

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <boost/asio/steady_timer.hpp>

#include "reins/async.h"

namespace reins {

class SessionQueue {
 public:
  // Waits for the session's turn; pair each call with Release(session_id). Until that
  // Release the queue may keep a view of `session_id` (the turn's own copy of the id).
  Task<void> Acquire(const std::string& session_id);
  void Release(const std::string& session_id);

 private:
  struct Waiter {
    std::shared_ptr<boost::asio::steady_timer> timer;  // cancelled = your turn
    std::string session_id;
  };
  struct Line {
    bool busy = false;
    // A list, not a deque: it allocates nothing while no turn waits, where a deque
    // takes 576 bytes for every session with a turn in flight.
    std::list<Waiter> waiting;
    // The id the line's key views once a waiter has had the line passed to it.
    std::unique_ptr<std::string> passed_id;
  };
  // Keyed by a view of the session's id: of the first turn's own copy while that turn
  // has the line, else of `passed_id`. A copy of each id here was a heap block for
  // every turn in flight.
  std::map<std::string_view, Line> lines_;  // under mu_
  std::mutex mu_;
};

}  // namespace reins

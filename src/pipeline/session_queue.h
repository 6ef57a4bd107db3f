// SessionQueue: turns of one session run one at a time, in arrival order. A turn
// waits (holding no thread) until the turn before it has finished.
//
// Threading: for coroutines on one executor (single-threaded io_context, or a strand).
#pragma once

#include <list>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/steady_timer.hpp>

#include "reins/async.h"

namespace reins {

class SessionQueue {
 public:
  // Waits for the session's turn; pair each call with Release(session_id).
  Task<void> Acquire(const std::string& session_id);
  void Release(const std::string& session_id);

 private:
  struct Line {
    bool busy = false;
    // Cancelled = your turn. A list, not a deque: it allocates nothing while no turn
    // waits, where a deque takes 576 bytes for every session with a turn in flight.
    std::list<std::shared_ptr<boost::asio::steady_timer>> waiting;
  };
  std::map<std::string, Line> lines_;
};

}  // namespace reins

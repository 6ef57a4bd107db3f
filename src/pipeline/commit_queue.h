// CommitQueue: group commit on the runtime's event loop. A turn that reaches its commit
// joins the batch of this pass of the loop and waits; the batch is written in one
// transaction (Store::CommitTurns, a savepoint per turn) when the loop comes round to
// it. Turns that finish together share one commit's page writes and locks; a lone turn
// waits for one pass of the loop, with no thread hand-off. A turn's status is its own:
// one that fails to commit leaves the others committed. On a shared store the batch is
// written on the store's threads (StoreCalls) while the loop goes on; the next batch
// may then be written alongside it, never with a turn of the same session (a session
// runs one turn at a time).
//
// Threading: safe from any executor. Each executor (an event loop of reins serve, a
// strand) has a batch of its own: its turns commit together on it and resume there,
// with no hand-off between threads. (One batch for every executor made each turn of
// another loop resume through a post across threads, a wake-up of that loop each,
// and cost a served turn more CPU on two threads than a batch a loop: docs/PERFORMANCE.md,
// "Sessions on threads of their own".) The mutex is held only to add to a batch or take
// it; batches of different executors may be written at once, never with a turn of the
// same session (a session runs one turn at a time).
#pragma once

#include <mutex>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include "pipeline/store_calls.h"
#include "reins/async.h"
#include "reins/store.h"

namespace reins {

class CommitQueue {
 public:
  explicit CommitQueue(StoreCalls& calls) : calls_(calls) {}

  // Commits `record` with the others that arrive in this pass of the loop.
  Task<Status> Commit(const TurnRecord& record);

 private:
  struct Waiting {
    const TurnRecord* record;
    Status* status;
    boost::asio::any_io_executor executor;  // the turn's own
    boost::asio::any_completion_handler<void()> done;
  };
  struct Batch {
    boost::asio::any_io_executor executor;
    std::vector<Waiting> waiting;
  };
  void Flush(const boost::asio::any_io_executor& executor);
  std::vector<Batch>::iterator BatchOf(const boost::asio::any_io_executor& executor);  // under mu_

  StoreCalls& calls_;
  std::mutex mu_;
  std::vector<Batch> batches_;  // under mu_: one per executor with turns waiting, few
};

}  // namespace reins

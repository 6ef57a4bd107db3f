// CommitQueue: group commit (a StoreBatch of turns). A turn that reaches its commit
// joins the batch of this pass of its event loop and waits; the batch is written in
// one call (Store::CommitTurns: one transaction on SQLite, again with a savepoint per
// turn when a turn fails; one pipeline and one transaction on PostgreSQL, a transaction
// per turn when that fails). Turns that finish together share one commit's page writes
// and locks, or one round trip. A turn's status is its own: one that fails to commit
// leaves the others committed. Batches written alongside each other never hold a turn of
// the same session (a session runs one turn at a time).
#pragma once

#include "pipeline/store_batch.h"
#include "reins/async.h"
#include "reins/store.h"

namespace reins {

class CommitQueue {
 public:
  explicit CommitQueue(StoreCalls& calls)
      : batch_(calls, [](Store& store, const std::vector<const TurnRecord*>& turns) {
          return store.CommitTurns(turns);
        }) {}

  // Commits `record` with the others that arrive in this pass of the loop.
  Task<Status> Commit(const TurnRecord& record) { return batch_.Call(record); }

 private:
  StoreBatch<TurnRecord, Status> batch_;
};

}  // namespace reins

#include "pipeline/commit_queue.h"

#include <algorithm>
#include <memory>

#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "net/no_throw.h"

namespace reins {

namespace asio = boost::asio;

Task<Status> CommitQueue::Commit(const TurnRecord& record) {
  auto executor = co_await asio::this_coro::executor;
  Status status = Internal("the commit did not run");
  Status* out = &status;
  const TurnRecord* in = &record;
  // A named initiation, not a temporary: GCC 12 destroys some temporaries of a co_await
  // expression twice, and this one holds the executor.
  auto enqueue = [this, in, out, executor](auto handler) {
    bool opens;
    {
      std::lock_guard lock(mu_);
      auto it = BatchOf(executor);
      opens = it == batches_.end();
      if (opens) it = batches_.insert(batches_.end(), Batch{executor, {}});
      it->waiting.push_back({in, out, executor, std::move(handler)});
    }
    // The first turn of a pass schedules the flush behind whatever else is ready.
    if (opens) asio::post(executor, [this, executor] { Flush(executor); });
  };
  auto queued = asio::async_initiate<decltype(kNoThrow), void()>(std::move(enqueue), kNoThrow);
  co_await std::move(queued);
  co_return status;
}

std::vector<CommitQueue::Batch>::iterator CommitQueue::BatchOf(const asio::any_io_executor& executor) {
  return std::find_if(batches_.begin(), batches_.end(), [&](const Batch& b) { return b.executor == executor; });
}

void CommitQueue::Flush(const asio::any_io_executor& executor) {
  auto batch = std::make_shared<std::vector<Waiting>>();
  {
    std::lock_guard lock(mu_);
    auto it = BatchOf(executor);
    if (it == batches_.end()) return;
    batch->swap(it->waiting);
    batches_.erase(it);
  }
  // While the batch is written on the store's threads, each turn's loop has work
  // outstanding (an io_context run to completion must not end under it).
  for (Waiting& w : *batch) w.executor = asio::prefer(w.executor, asio::execution::outstanding_work.tracked);
  calls_.Post([batch](Store& store) {
    std::vector<const TurnRecord*> records;
    records.reserve(batch->size());
    for (const Waiting& w : *batch) records.push_back(w.record);
    std::vector<Status> statuses = store.CommitTurns(records);
    for (size_t i = 0; i < batch->size(); ++i) {
      Waiting& w = (*batch)[i];
      *w.status = i < statuses.size() ? std::move(statuses[i]) : Internal("the store returned no status");
      // Resumed through its own executor, not from inside this loop: a resumed turn may
      // commit again before the flush is done.
      asio::post(w.executor, std::move(w.done));
    }
  });
}

}  // namespace reins

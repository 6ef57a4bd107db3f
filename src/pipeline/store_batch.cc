#include "pipeline/store_batch.h"

#include <algorithm>
#include <memory>

#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "net/no_throw.h"

namespace reins {

namespace asio = boost::asio;

Task<void> StoreBatchCore::Join(const void* ask, void* answer) {
  auto executor = co_await asio::this_coro::executor;
  // A named initiation, not a temporary: GCC 12 destroys some temporaries of a co_await
  // expression twice, and this one holds the executor.
  auto enqueue = [this, ask, answer, executor](auto handler) {
    const asio::any_io_executor key = KeyOf(executor);
    bool opens;
    {
      std::lock_guard lock(mu_);
      auto it = BatchOf(key);
      opens = it == batches_.end();
      if (opens) it = batches_.insert(batches_.end(), Batch{key, {}});
      it->waiting.push_back({ask, answer, executor, std::move(handler)});
    }
    // The first call of a pass schedules the flush behind whatever else is ready.
    if (opens) asio::post(executor, [this, key] { Flush(key); });
  };
  auto queued = asio::async_initiate<decltype(kNoThrow), void()>(std::move(enqueue), kNoThrow);
  co_await std::move(queued);
}

asio::any_io_executor StoreBatchCore::KeyOf(const asio::any_io_executor& executor) const {
  return calls_.offloaded() ? asio::any_io_executor() : executor;
}

std::vector<StoreBatchCore::Batch>::iterator StoreBatchCore::BatchOf(const asio::any_io_executor& key) {
  return std::find_if(batches_.begin(), batches_.end(), [&](const Batch& b) { return b.key == key; });
}

void StoreBatchCore::Flush(const asio::any_io_executor& key) {
  auto batch = std::make_shared<std::vector<Waiting>>();
  {
    std::lock_guard lock(mu_);
    auto it = BatchOf(key);
    if (it == batches_.end()) return;
    batch->swap(it->waiting);
    batches_.erase(it);
  }
  // While the batch is answered on the store's threads, each caller's loop has work
  // outstanding (an io_context run to completion must not end under it).
  for (Waiting& w : *batch) w.executor = asio::prefer(w.executor, asio::execution::outstanding_work.tracked);
  calls_.Post([batch, answer_all = answer_all_](Store& store) {
    std::vector<const void*> asks;
    std::vector<void*> answers;
    asks.reserve(batch->size());
    answers.reserve(batch->size());
    for (const Waiting& w : *batch) {
      asks.push_back(w.ask);
      answers.push_back(w.answer);
    }
    (*answer_all)(store, asks, answers);
    // Each resumed through its own executor, not from inside this loop: a resumed
    // caller may join a batch again before the flush is done.
    for (Waiting& w : *batch) asio::post(w.executor, std::move(w.done));
  });
}

}  // namespace reins

// StoreBatch: store calls that cost less together than one by one. The calls of one
// kind that arrive in one pass of an event loop wait, and go to the store as one call
// when the loop comes round to it; each caller gets its own answer. Group commit
// (CommitQueue: a batch of turns, one transaction or one pipeline) and the replicas'
// session claims (ClaimQueue: a batch of claims, one statement) are two. A lone call
// waits for one pass of the loop, with no thread hand-off. On a shared store the batch
// is answered on the store's threads (StoreCalls) while the loop goes on; the next
// batch may then be answered alongside it.
//
// Threading: safe from any executor. Where the store answers inline (SQLite), each
// executor (an event loop of reins serve, a strand) has a batch of its own: its callers
// are answered together and resume there, with no hand-off between threads. (One batch
// for every executor made each turn of another loop resume through a post across
// threads, a wake-up of that loop each, and cost a served turn more CPU on two threads
// than a batch a loop: docs/PERFORMANCE.md, "Sessions on threads of their own".) Where
// the store answers on its own threads (PostgreSQL), every caller resumes through a
// post from there anyway, so the executors share one batch: half the statements on two
// loops. The mutex is held only to add to a batch or take it.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include "pipeline/store_calls.h"
#include "reins/async.h"
#include "reins/status.h"
#include "reins/store.h"

namespace reins {

// What StoreBatch shares whatever it batches: the asks and answers are untyped here.
class StoreBatchCore {
 public:
  StoreBatchCore(const StoreBatchCore&) = delete;
  StoreBatchCore& operator=(const StoreBatchCore&) = delete;

 protected:
  // Answers every ask of a batch, asks[i] into answers[i], on a store thread.
  using AnswerAll = std::function<void(Store&, const std::vector<const void*>& asks, const std::vector<void*>& answers)>;
  StoreBatchCore(StoreCalls& calls, AnswerAll answer_all)
      : calls_(calls), answer_all_(std::make_shared<const AnswerAll>(std::move(answer_all))) {}
  // Adds `ask` to this pass's batch and returns once `answer` is filled.
  Task<void> Join(const void* ask, void* answer);

 private:
  struct Waiting {
    const void* ask;
    void* answer;
    boost::asio::any_io_executor executor;  // the caller's own
    boost::asio::any_completion_handler<void()> done;
  };
  struct Batch {
    boost::asio::any_io_executor key;  // KeyOf
    std::vector<Waiting> waiting;
  };
  // The batch a caller on `executor` joins: its executor's own, or the one every
  // executor shares (an empty key) when the store's threads answer.
  boost::asio::any_io_executor KeyOf(const boost::asio::any_io_executor& executor) const;
  void Flush(const boost::asio::any_io_executor& key);
  std::vector<Batch>::iterator BatchOf(const boost::asio::any_io_executor& key);  // under mu_

  StoreCalls& calls_;
  // Shared with each batch on its way: a batch may still be answered while this batch
  // is destroyed (StoreCalls waits for it, and is destroyed after).
  const std::shared_ptr<const AnswerAll> answer_all_;
  std::mutex mu_;
  std::vector<Batch> batches_;  // under mu_: one per executor with callers waiting, few
};

// Batches of `Ask`, each answered by `Write` with one `Answer` per ask, in order.
// `Answer` is Status or a Result: it is made from a Status when the store gave none.
template <typename Ask, typename Answer>
class StoreBatch : private StoreBatchCore {
 public:
  using Write = std::function<std::vector<Answer>(Store&, const std::vector<const Ask*>&)>;

  StoreBatch(StoreCalls& calls, Write write)
      : StoreBatchCore(calls, [write = std::move(write)](Store& store, const std::vector<const void*>& asks,
                                                         const std::vector<void*>& answers) {
          std::vector<const Ask*> typed;
          typed.reserve(asks.size());
          for (const void* ask : asks) typed.push_back(static_cast<const Ask*>(ask));
          std::vector<Answer> got = write(store, typed);
          for (size_t i = 0; i < answers.size(); ++i) {
            *static_cast<Answer*>(answers[i]) = i < got.size() ? std::move(got[i]) : Answer(Internal("the store gave no answer"));
          }
        }) {}

  // `ask` answered with the others of this pass of the loop.
  Task<Answer> Call(const Ask& ask) {
    Answer answer = Internal("the store call did not run");
    co_await Join(&ask, &answer);
    co_return answer;
  }
};

}  // namespace reins

#include "pipeline/store_calls.h"

#include <exception>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>

#include "net/no_throw.h"

namespace reins {

namespace asio = boost::asio;

struct StoreCalls::Pool {
  explicit Pool(int threads) : threads(static_cast<size_t>(threads)) {}
  asio::thread_pool threads;
};

StoreCalls::StoreCalls(Store& store, int threads)
    : store_(store), pool_(threads > 0 ? std::make_unique<Pool>(threads) : nullptr) {}

StoreCalls::~StoreCalls() {
  if (pool_) pool_->threads.join();
}

void StoreCalls::Post(std::function<void(Store&)> call) {
  if (!pool_) {
    call(store_);
    return;
  }
  asio::post(pool_->threads, [this, call = std::move(call)] { call(store_); });
}

Task<void> StoreCalls::Away(std::function<void()> work) {
  // Tracked: the caller's event loop has work outstanding while the call is away, so
  // an io_context run to completion (a scenario, a test) does not end under it.
  asio::any_io_executor executor =
      asio::prefer(co_await asio::this_coro::executor, asio::execution::outstanding_work.tracked);
  std::exception_ptr thrown;
  // A named initiation, not a temporary in the co_await expression (GCC 12).
  auto initiate = [this, &work, &thrown, executor](auto handler) {
    asio::post(pool_->threads, [&work, &thrown, executor, handler = std::move(handler)]() mutable {
      try {
        work();
      } catch (...) {
        thrown = std::current_exception();
      }
      asio::post(executor, std::move(handler));  // back on the caller's executor
    });
  };
  auto hand_off = asio::async_initiate<decltype(kNoThrow), void()>(std::move(initiate), kNoThrow);
  co_await std::move(hand_off);
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace reins

// Runs a Task to completion on a private io_context, for tests.
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "reins/async.h"
#include "reins/clock.h"

namespace reins::testing {

// With a VirtualClock, virtual sleeps are driven to completion (clock->RunVirtual).
template <typename T>
T RunSync(Task<T> task, VirtualClock* clock = nullptr) {
  boost::asio::io_context io;
  std::optional<T> out;
  auto body = [&]() -> Task<void> { out.emplace(co_await std::move(task)); };
  boost::asio::co_spawn(io, body(), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  if (clock != nullptr) {
    clock->RunVirtual(io);
  } else {
    io.run();
  }
  return std::move(*out);
}

// The same for a Task<void>: runs it to completion.
inline void RunSync(Task<void> task, VirtualClock* clock = nullptr) {
  auto done = [](Task<void> t) -> Task<bool> {
    co_await std::move(t);
    co_return true;
  };
  (void)RunSync(done(std::move(task)), clock);
}

}  // namespace reins::testing

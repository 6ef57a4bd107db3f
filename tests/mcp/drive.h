// Runs one coroutine of an MCP test on `io` with real time, to its end. The io_context
// is stopped then: servers still running keep it busy with their pipes and sockets.
#pragma once

#include <exception>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "reins/async.h"

namespace reins::testing {

template <typename F>
void Drive(boost::asio::io_context& io, F body) {
  bool done = false;
  boost::asio::co_spawn(io, [&]() -> Task<void> {
    co_await body();
    done = true;
    io.stop();
  }, [](std::exception_ptr e) { if (e) std::rethrow_exception(e); });
  io.run();
  io.restart();
  ASSERT_TRUE(done);
}

}  // namespace reins::testing

// kNoThrow: the completion token of the operations a turn awaits on its way: the HTTP
// client's and server's socket and timer operations (but the TLS handshake: Beast's
// stream of Boost 1.81 takes no deferred token) and the pipeline's hand-offs to the
// store and between turns. The clock, MCP and CLI code still awaits with
// as_tuple(use_awaitable). The error comes back in a tuple, never thrown, and co_await
// starts the operation itself (asio::deferred): use_awaitable would run each one in a
// coroutine frame of its own, 191 bytes more held by every turn waiting on its model
// (docs/PERFORMANCE.md, round 24).
//
// Name the operation, then await it:
//   auto wait = timer.async_wait(kNoThrow);
//   auto [ec] = co_await std::move(wait);
// An operation can hold an executor (a strand's shares its state by reference count),
// and GCC 12 destroys some temporaries of a co_await expression twice.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>

namespace reins {

inline constexpr auto kNoThrow = boost::asio::as_tuple(boost::asio::deferred);

}  // namespace reins

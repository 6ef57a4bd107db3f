// WaitReadable: the wait for a socket to have bytes to read, before anything is
// allocated to read them. The HTTP client waits this way for a model's answer, and the
// server for a kept-alive connection's next request: a wait that lasts seconds (or a
// connection's whole idle life) then holds no parser and no read buffer, only the
// operation, allocated at its own size (net/exact_allocator.h). The allocator is bound
// to the handler, not to the token: Boost 1.81 binds none to a deferred one.
//
//   auto wait = WaitReadable(socket);
//   auto [ec] = co_await std::move(wait);
#pragma once

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "net/exact_allocator.h"
#include "net/no_throw.h"

namespace reins {

inline auto WaitReadable(boost::asio::ip::tcp::socket& socket) {
  auto initiate = [&socket](auto handler) {
    socket.async_wait(boost::asio::ip::tcp::socket::wait_read,
                      boost::asio::bind_allocator(ExactAllocator<void>(), std::move(handler)));
  };
  return boost::asio::async_initiate<decltype(kNoThrow), void(boost::system::error_code)>(std::move(initiate),
                                                                                          kNoThrow);
}

}  // namespace reins

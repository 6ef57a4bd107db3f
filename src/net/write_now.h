// Writing to a non-blocking socket without the io_context first: a request or a response
// of a few KB usually goes whole into the socket in one sendmsg, and then neither the
// write's deadline (then a timer: a timerfd_settime when it was the earliest) nor the
// asynchronous write's completion (a pass through the io_context, an epoll_wait) is
// needed. The caller writes what is left, if anything, asynchronously and under its
// deadline (docs/PERFORMANCE.md, round 17).
#pragma once

#include <cstddef>

#include <boost/asio/ip/tcp.hpp>

namespace reins {

// How many bytes of `buffers` the socket took at once: 0 when it would block, when it
// failed (the asynchronous write that follows meets the error again and reports it), or
// when the socket is a blocking one (which a call here would block on).
template <typename ConstBuffers>
size_t WriteNow(boost::asio::ip::tcp::socket& socket, const ConstBuffers& buffers) {
  if (!socket.non_blocking()) return 0;
  boost::system::error_code ec;
  const size_t n = socket.write_some(buffers, ec);
  return ec ? 0 : n;
}

}  // namespace reins

// SocketDeadline: a deadline on what waits on one socket. The client's and the server's
// connections are plain sockets (or TLS over one) rather than Beast's basic_stream,
// whose two timers and shared state took about 540 bytes of every connection, held by
// every turn waiting on its model on each of its two connections (docs/PERFORMANCE.md,
// round 21). A deadline lives as long as one wait: its timer is on the heap, shared
// with the timer's handler, which may run after the wait is over.
//
// At the deadline the socket is closed, as basic_stream did, so whatever waits on it
// ends with an error; passed() says whether the deadline was what ended it.
#pragma once

#include <chrono>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace reins {

class SocketDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  SocketDeadline() = default;  // none
  // Starts the deadline. `executor` is the waiting coroutine's, so that the timer's
  // handler never runs beside it; `socket` must outlive this deadline or its End().
  SocketDeadline(const boost::asio::any_io_executor& executor, boost::asio::ip::tcp::socket& socket,
                 Clock::time_point at);
  SocketDeadline(SocketDeadline&&) noexcept = default;
  SocketDeadline& operator=(SocketDeadline&& other) noexcept;
  SocketDeadline(const SocketDeadline&) = delete;
  SocketDeadline& operator=(const SocketDeadline&) = delete;
  ~SocketDeadline() { End(); }

  // The wait is over: the socket is not touched after this. True when the deadline
  // came first (the socket is then closed). Again, or on none: what it said before.
  bool End();
  bool passed() const;

 private:
  struct Timer;
  std::shared_ptr<Timer> timer_;
};

}  // namespace reins

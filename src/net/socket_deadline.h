// SocketDeadline: a deadline on what waits on one socket. The client's and the server's
// connections are plain sockets (or TLS over one) rather than Beast's basic_stream,
// whose two timers and shared state took about 540 bytes of every connection, held by
// every turn waiting on its model on each of its two connections (docs/PERFORMANCE.md,
// round 21).
//
// The deadlines of an io_context wait in one queue (a heap, in socket_deadline.cc)
// under one timer, set for the earliest; a deadline is a node of it, inline where it is
// declared. Starting one allocates nothing, and ending one before it passes (as nearly
// every one ends) takes it off the queue under a lock: no timer and no operation of its
// own, no cancelled completion to run through the event loop. A timer per deadline held
// 350 bytes of every turn waiting on its model (docs/PERFORMANCE.md, round 23).
//
// At the deadline the socket is shut down (both ways), so whatever waits on it ends: a
// read at its end, a write with an error, a connect still under way aborted. The queue
// does it from whichever thread runs its timer, which a shutdown allows (a close would
// race with the thread that uses the socket); passed() says whether the deadline was
// what ended the wait. The socket must stay open until the deadline ends (End(), or
// its destructor).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>

#include <boost/asio/ip/tcp.hpp>

namespace reins {

class DeadlineQueue;

class SocketDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  SocketDeadline() = default;  // none
  SocketDeadline(boost::asio::ip::tcp::socket& socket, Clock::time_point at) { Start(socket, at); }
  // A node of its queue, where it is: not copied, not moved.
  SocketDeadline(const SocketDeadline&) = delete;
  SocketDeadline& operator=(const SocketDeadline&) = delete;
  ~SocketDeadline() { End(); }

  // Starts the deadline for `socket`, in the queue of the socket's io_context; one
  // started before is ended first.
  void Start(boost::asio::ip::tcp::socket& socket, Clock::time_point at);
  // The wait is over: the socket is not touched after this. True when the deadline
  // came first (the socket was then shut down). Again, or on none: what it said before.
  bool End();
  bool passed() const { return passed_.load(std::memory_order_acquire); }

 private:
  friend class DeadlineQueue;
  static constexpr size_t kNotQueued = static_cast<size_t>(-1);

  DeadlineQueue* queue_ = nullptr;  // while queued (or until End() after it passed)
  Clock::time_point at_{};
  int fd_ = -1;
  size_t index_ = kNotQueued;  // in the queue's heap
  std::atomic<bool> passed_{false};
};

}  // namespace reins

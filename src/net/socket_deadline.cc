#include "net/socket_deadline.h"

#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/steady_timer.hpp>

#include "net/exact_allocator.h"

namespace reins {

struct SocketDeadline::Timer {
  explicit Timer(const boost::asio::any_io_executor& executor) : timer(executor) {}
  boost::asio::steady_timer timer;
  bool waiting = true;
  bool passed = false;
};

SocketDeadline::SocketDeadline(const boost::asio::any_io_executor& executor, boost::asio::ip::tcp::socket& socket,
                               Clock::time_point at)
    : timer_(std::make_shared<Timer>(executor)) {
  timer_->timer.expires_at(at);
  // The socket is touched only while the wait on it is on, so it is alive.
  timer_->timer.async_wait(
      boost::asio::bind_allocator(ExactAllocator<void>(), [t = timer_, &socket](boost::system::error_code ec) {
        if (ec || !t->waiting) return;
        t->passed = true;
        boost::system::error_code ignored;
        socket.close(ignored);
      }));
}

SocketDeadline& SocketDeadline::operator=(SocketDeadline&& other) noexcept {
  if (this != &other) {
    End();
    timer_ = std::move(other.timer_);
  }
  return *this;
}

bool SocketDeadline::End() {
  if (!timer_) return false;
  if (timer_->waiting) {
    timer_->waiting = false;
    timer_->timer.cancel();
  }
  return timer_->passed;
}

bool SocketDeadline::passed() const { return timer_ && timer_->passed; }

}  // namespace reins

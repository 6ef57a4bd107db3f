#include "net/socket_deadline.h"

#include <sys/socket.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

namespace reins {

namespace asio = boost::asio;
using Clock = SocketDeadline::Clock;

// The deadlines of one io_context, earliest first: a binary heap of pointers to them,
// each knowing its place in it, so that one is taken off wherever it is. One timer is
// set for the earliest. One taken off leaves it set (it then finds nothing due, and is
// set again for the next), so that only a deadline earlier than every other sets it,
// unless none is left: a timer set for nothing would keep the io_context's run() from
// returning. Its handler runs on any of the context's threads: the lock orders it with
// every start and end.
class DeadlineQueue final : public asio::execution_context::service {
 public:
  static asio::execution_context::id id;

  explicit DeadlineQueue(asio::io_context& io) : asio::execution_context::service(io), timer_(io) {}

  void Add(SocketDeadline* d) {
    std::lock_guard lock(mu_);
    if (stopped_) {  // the context is going: nothing waits any more
      d->queue_ = nullptr;
      return;
    }
    d->index_ = heap_.size();
    heap_.push_back(d);
    SiftUp(d->index_);
    if (d->at_ < armed_) Arm(d->at_);
  }

  void Remove(SocketDeadline* d) {
    std::lock_guard lock(mu_);
    if (d->index_ == SocketDeadline::kNotQueued) return;
    Erase(d->index_);
    // A timer set for nothing would keep the io_context's run() from returning.
    if (heap_.empty() && armed_ != Clock::time_point::max()) {
      armed_ = Clock::time_point::max();
      timer_.cancel();
    }
  }

 private:
  // The context is being destroyed: its handlers will not run, and a deadline ended
  // after this finds no queue.
  void shutdown() override {
    std::lock_guard lock(mu_);
    stopped_ = true;
    for (SocketDeadline* d : heap_) {
      d->index_ = SocketDeadline::kNotQueued;
      d->queue_ = nullptr;
    }
    heap_.clear();
    boost::system::error_code ignored;
    timer_.cancel(ignored);
  }

  // Under mu_. Setting the time cancels a wait set before (its handler sees an error).
  void Arm(Clock::time_point at) {
    armed_ = at;
    timer_.expires_at(at);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) Fire();
    });
  }

  void Fire() {
    std::lock_guard lock(mu_);
    armed_ = Clock::time_point::max();
    const Clock::time_point now = Clock::now();
    while (!heap_.empty() && heap_.front()->at_ <= now) {
      SocketDeadline* due = heap_.front();
      Erase(0);
      due->passed_.store(true, std::memory_order_release);
      // The socket is open: its owner ends the deadline (which waits for this lock)
      // before it closes it.
      ::shutdown(due->fd_, SHUT_RDWR);
    }
    if (!heap_.empty()) Arm(heap_.front()->at_);
  }

  void Erase(size_t i) {
    heap_[i]->index_ = SocketDeadline::kNotQueued;
    SocketDeadline* last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    Place(i, last);
    SiftUp(i);
    SiftDown(last->index_);
  }

  void Place(size_t i, SocketDeadline* d) {
    heap_[i] = d;
    d->index_ = i;
  }

  void SiftUp(size_t i) {
    SocketDeadline* d = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!(d->at_ < heap_[parent]->at_)) break;
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, d);
  }

  void SiftDown(size_t i) {
    SocketDeadline* d = heap_[i];
    for (;;) {
      size_t first = i;
      Clock::time_point earliest = d->at_;
      for (size_t child = 2 * i + 1; child <= 2 * i + 2 && child < heap_.size(); ++child) {
        if (heap_[child]->at_ < earliest) {
          first = child;
          earliest = heap_[child]->at_;
        }
      }
      if (first == i) break;
      Place(i, heap_[first]);
      i = first;
    }
    Place(i, d);
  }

  std::mutex mu_;
  std::vector<SocketDeadline*> heap_;
  asio::steady_timer timer_;
  Clock::time_point armed_ = Clock::time_point::max();  // when the timer is set for
  bool stopped_ = false;
};

asio::execution_context::id DeadlineQueue::id;

namespace {

// The io_context whose threads run what `executor` runs: its own executor's, or a
// strand's of one (every socket in reins is on one).
asio::io_context& IoContextOf(const asio::any_io_executor& executor) {
  if (const auto* own = executor.target<asio::io_context::executor_type>()) return own->context();
  if (const auto* strand = executor.target<asio::strand<asio::io_context::executor_type>>()) {
    return strand->get_inner_executor().context();
  }
  if (const auto* strand = executor.target<asio::strand<asio::any_io_executor>>()) {
    return IoContextOf(strand->get_inner_executor());
  }
  throw std::logic_error("a SocketDeadline needs the executor of an io_context, or of a strand of one");
}

}  // namespace

void SocketDeadline::Start(asio::ip::tcp::socket& socket, Clock::time_point at) {
  End();
  queue_ = &asio::use_service<DeadlineQueue>(IoContextOf(socket.get_executor()));
  at_ = at;
  fd_ = socket.native_handle();
  passed_.store(false, std::memory_order_relaxed);
  queue_->Add(this);
}

bool SocketDeadline::End() {
  if (queue_ != nullptr) {
    queue_->Remove(this);
    queue_ = nullptr;
  }
  return passed();
}

}  // namespace reins

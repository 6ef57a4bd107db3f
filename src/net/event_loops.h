// EventLoops: the event loops of `reins serve --threads N`, one io_context per thread,
// each run by its thread alone, as nginx's and Envoy's workers are. The server gives
// each connection it accepts to a loop (the loops in turn) and everything its requests
// start runs there: the turn, its model and tool calls (pooled connections belong to
// their loop: HttpClient), its writes. Nothing of a turn crosses threads, and no strand
// is needed, each loop being one thread (SerialExecutor). One io_context run by N
// threads instead shares its reactor: its threads hand completions to each other (a
// futex wake and an inter-processor interrupt each) and every connection needs a
// strand; on two cores that made a served turn cost 1.6× the CPU of one thread
// (docs/PERFORMANCE.md, "Sessions on threads of their own").
#pragma once

#include <memory>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace reins {

class EventLoops {
 public:
  explicit EventLoops(int threads);
  ~EventLoops();
  EventLoops(const EventLoops&) = delete;
  EventLoops& operator=(const EventLoops&) = delete;

  int size() const { return static_cast<int>(loops_.size()); }
  // The first loop: the listener, signals, the outbox's resume, and what must run one
  // at a time (a tenant's quota).
  boost::asio::io_context& first() { return *loops_.front(); }
  std::vector<boost::asio::io_context*> all() const;

  // Runs every loop, the first on the calling thread and each other on a thread of its
  // own, and returns once Stop() was called and every thread has returned.
  void Run();
  // Any thread.
  void Stop();

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> loops_;
  std::vector<Guard> busy_;  // a loop with nothing to do waits, and does not return
};

}  // namespace reins

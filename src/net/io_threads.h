// How many threads run an io_context, as its owner declares it. Asio does not say; a
// component that would hand work to another thread (HttpModel reading a model's stream
// off the caller's strand) asks here, and stays on the caller's strand when only one
// thread runs the context, where a hand-off would buy nothing and cost a hop; so does
// one that wants its work serialised (SerialExecutor).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

namespace reins {

// Declared by whoever runs `io` (EventLoops: one each): `threads` threads call io.run().
void DeclareIoThreads(boost::asio::io_context& io, int threads);

// The io_context that `context` is, when its owner declared more than one thread for
// it; null when it declared one, or nothing.
boost::asio::io_context* MultiThreadedIoContext(boost::asio::execution_context& context);

// An executor whose handlers run one at a time: `io`'s own when its owner declared one
// thread for it, else a new strand of `io`. On one thread a strand serialises nothing
// the thread does not, and costs on every completion: the handler queued a second time
// (one more pass of the event loop, one more epoll_wait), a lock, and reference counts
// on each copy of the executor (docs/PERFORMANCE.md, round 7).
boost::asio::any_io_executor SerialExecutor(boost::asio::io_context& io);

}  // namespace reins

// SocketDeadline and the queue its deadlines wait in: a deadline that passes ends what
// waits on its socket (a read, a connect), one ended first leaves the socket alone, and
// many deadlines started and ended in any order pass at their own times, also with two
// threads running the io_context.
#include "net/socket_deadline.h"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace reins {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = SocketDeadline::Clock;
using std::chrono::milliseconds;

// Two ends of one loopback connection, made with blocking calls.
struct Pair {
  Pair(asio::io_context& io, tcp::acceptor& listener) : near(io), far(io) {
    near.connect(listener.local_endpoint());
    far = listener.accept();
  }
  tcp::socket near;
  tcp::socket far;
};

tcp::acceptor Listener(asio::io_context& io) {
  return tcp::acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
}

// What a read on `socket` ended with, and when.
struct ReadEnd {
  bool done = false;
  boost::system::error_code ec;
  size_t bytes = 0;
  Clock::time_point at;
};

// Runs `io` until `done` says so (or a minute passes: a margin for a busy machine): a
// queue's timer set for later would keep run_for() going to its end.
template <typename Done>
void RunUntil(asio::io_context& io, Done done) {
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(60);
  while (!done() && Clock::now() < give_up) io.run_one_for(milliseconds(20));
}

void StartRead(tcp::socket& socket, std::array<char, 16>& buffer, ReadEnd& end) {
  socket.async_read_some(asio::buffer(buffer), [&end](boost::system::error_code ec, size_t n) {
    end = {true, ec, n, Clock::now()};
  });
}

TEST(SocketDeadline, OnePassedEndsTheReadOnItsSocketAndSaysSo) {
  asio::io_context io;
  tcp::acceptor listener = Listener(io);
  Pair pair(io, listener);
  std::array<char, 16> buffer{};
  ReadEnd read;
  const Clock::time_point start = Clock::now();
  SocketDeadline deadline(pair.near, start + milliseconds(50));
  StartRead(pair.near, buffer, read);
  RunUntil(io, [&] { return read.done; });
  ASSERT_TRUE(read.done);
  EXPECT_EQ(read.ec, asio::error::eof);  // shut down: the read meets the socket's end
  EXPECT_GE(read.at - start, milliseconds(50));
  EXPECT_LT(read.at - start, std::chrono::seconds(2));
  EXPECT_TRUE(deadline.passed());
  EXPECT_TRUE(deadline.End());
  EXPECT_TRUE(deadline.End());  // again: what it said before
}

TEST(SocketDeadline, OneEndedFirstLeavesItsSocketAlone) {
  asio::io_context io;
  tcp::acceptor listener = Listener(io);
  Pair pair(io, listener);
  {
    SocketDeadline deadline(pair.near, Clock::now() + milliseconds(20));
    EXPECT_FALSE(deadline.End());
  }
  SocketDeadline restarted(pair.near, Clock::now() + milliseconds(20));
  restarted.Start(pair.near, Clock::now() + std::chrono::hours(1));  // the first is ended
  asio::steady_timer later(io, milliseconds(150));
  std::array<char, 16> buffer{};
  ReadEnd read;
  later.async_wait([&](boost::system::error_code) {
    asio::write(pair.far, asio::buffer(std::string_view("hello")));
    StartRead(pair.near, buffer, read);
  });
  RunUntil(io, [&] { return read.done; });
  ASSERT_TRUE(read.done);
  EXPECT_FALSE(read.ec) << read.ec.message();
  EXPECT_EQ(std::string_view(buffer.data(), read.bytes), "hello");
  EXPECT_FALSE(restarted.passed());
}

// The queue's timer does not outlive the last deadline in it: io_context::run() returns
// once nothing else is left to do, not at the hour.
TEST(SocketDeadline, NoneLeftLetsTheIoContextsRunReturn) {
  asio::io_context io;
  tcp::acceptor listener = Listener(io);
  Pair pair(io, listener);
  SocketDeadline first(pair.near, Clock::now() + std::chrono::hours(1));
  SocketDeadline second(pair.near, Clock::now() + std::chrono::hours(2));
  asio::post(io, [&] {
    EXPECT_FALSE(second.End());
    EXPECT_FALSE(first.End());
  });
  const Clock::time_point start = Clock::now();
  io.run();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
}

// A connect the listener never answers (its queue is full, so the kernel drops the SYN)
// is aborted at the deadline.
TEST(SocketDeadline, OnePassedAbortsAConnectUnderWay) {
  asio::io_context io;
  tcp::acceptor listener(io);
  const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), 0);
  listener.open(local.protocol());
  listener.bind(local);
  listener.listen(0);
  // Connections nobody accepts, until one no longer completes at once.
  std::vector<std::unique_ptr<tcp::socket>> queued;
  tcp::socket hanging(io);
  bool hangs = false;
  for (int i = 0; i < 64 && !hangs; ++i) {
    auto s = std::make_unique<tcp::socket>(io);
    s->open(tcp::v4());
    s->non_blocking(true);
    const tcp::endpoint to = listener.local_endpoint();
    if (::connect(s->native_handle(), to.data(), static_cast<socklen_t>(to.size())) != 0 && errno == EINPROGRESS) {
      // Under way: it hangs when the handshake does not complete within 200 ms.
      pollfd writable{s->native_handle(), POLLOUT, 0};
      hangs = ::poll(&writable, 1, 200) == 0;
    }
    queued.push_back(std::move(s));
  }
  ASSERT_TRUE(hangs) << "every connect completed at once: the listener's queue never filled";
  // The hanging kind of connect, made asynchronously under a deadline.
  hanging.open(tcp::v4());
  SocketDeadline deadline(hanging, Clock::now() + milliseconds(100));
  const Clock::time_point start = Clock::now();
  Clock::time_point ended;
  // What the kernel reports for an aborted connect varies; passed() is the answer.
  hanging.async_connect(listener.local_endpoint(), [&](boost::system::error_code) { ended = Clock::now(); });
  RunUntil(io, [&] { return ended != Clock::time_point{}; });
  ASSERT_NE(ended, Clock::time_point{}) << "the connect did not end";
  EXPECT_LT(ended - start, std::chrono::seconds(2));
  EXPECT_TRUE(deadline.End());
}

// Deadlines at random times, half of them ended before they pass, with `threads`
// threads running the io_context: each of the others passes, no earlier than its time.
void ManyDeadlines(int threads) {
  asio::io_context io(threads);
  tcp::acceptor listener = Listener(io);
  constexpr int kCount = 60;
  std::vector<std::unique_ptr<Pair>> pairs;
  for (int i = 0; i < kCount; ++i) pairs.push_back(std::make_unique<Pair>(io, listener));
  std::vector<std::unique_ptr<SocketDeadline>> deadlines(kCount);
  std::vector<std::array<char, 16>> buffers(kCount);
  std::vector<ReadEnd> reads(kCount);
  std::vector<Clock::time_point> due(kCount);
  std::vector<bool> ended(kCount, false);
  std::mt19937 rng(7);
  const Clock::time_point start = Clock::now();
  std::atomic<int> done{0};
  // Started and ended on the io_context's threads, as a server does.
  for (int i = 0; i < kCount; ++i) {
    due[i] = start + milliseconds(20 + static_cast<int>(rng() % 200));
    ended[i] = rng() % 2 == 0;
    asio::post(io, [&, i] {
      deadlines[i] = std::make_unique<SocketDeadline>(pairs[i]->near, due[i]);
      if (ended[i]) {
        EXPECT_FALSE(deadlines[i]->End());
        ++done;
        return;
      }
      pairs[i]->near.async_read_some(asio::buffer(buffers[i]), [&, i](boost::system::error_code ec, size_t n) {
        reads[i] = {true, ec, n, Clock::now()};
        ++done;
      });
    });
  }
  std::vector<std::thread> more;
  for (int t = 1; t < threads; ++t) more.emplace_back([&io] { io.run_for(std::chrono::seconds(60)); });  // to io.stop()
  RunUntil(io, [&] { return done == kCount; });
  io.stop();
  for (std::thread& t : more) t.join();
  ASSERT_EQ(done, kCount);
  for (int i = 0; i < kCount; ++i) {
    if (ended[i]) {
      EXPECT_FALSE(deadlines[i]->passed()) << i;
      continue;
    }
    EXPECT_TRUE(reads[i].done) << i;
    EXPECT_GE(reads[i].at, due[i]) << i;
    EXPECT_LT(reads[i].at - due[i], milliseconds(500)) << i;  // not held up behind a later one
    EXPECT_TRUE(deadlines[i]->End()) << i;
  }
  // A socket whose deadline was ended still carries bytes.
  for (int i = 0; i < kCount; ++i) {
    if (!ended[i]) continue;
    asio::write(pairs[i]->far, asio::buffer(std::string_view("x")));
    std::array<char, 1> one{};
    EXPECT_EQ(asio::read(pairs[i]->near, asio::buffer(one)), 1u) << i;
    break;
  }
}

TEST(SocketDeadline, ManyPassAtTheirOwnTimesWhateverTheOrder) { ManyDeadlines(1); }

TEST(SocketDeadline, ManyPassAtTheirOwnTimesWithTwoThreads) { ManyDeadlines(2); }

// An io_context destroyed with deadlines still waiting: ending them afterwards is safe.
TEST(SocketDeadline, OneOutlivingItsIoContextEndsQuietly) {
  auto io = std::make_unique<asio::io_context>();
  auto listener = std::make_unique<tcp::acceptor>(Listener(*io));
  auto pair = std::make_unique<Pair>(*io, *listener);
  SocketDeadline deadline(pair->near, Clock::now() + std::chrono::hours(1));
  pair.reset();  // (the deadline is an hour away: nothing shuts the closed socket down)
  listener.reset();
  io.reset();
  EXPECT_FALSE(deadline.End());
}

}  // namespace
}  // namespace reins

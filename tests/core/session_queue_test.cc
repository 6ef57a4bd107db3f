// SessionQueue: a session's turns one at a time, in arrival order. The queue keys its
// lines by views of the ids its turns hold, so in these tests each turn's id lives on
// the heap exactly as long as the turn (under AddressSanitizer a view kept past its
// turn is a use after free).
#include "pipeline/session_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace reins {
namespace {

constexpr const char* kSession = "s_0193e1d2a4f00123456789abcdef012345";  // longer than a string keeps inline

struct Log {
  std::vector<std::string> began;
  int running = 0;
  int most_at_once = 0;
};

// One turn: waits for its session, holds it until `gate` opens (an open gate still
// lets every other coroutine run once), and lets go; its copy of the id goes with it.
Task<void> Turn(SessionQueue& queue, std::string session, std::string name, Log& log,
                boost::asio::steady_timer& gate) {
  auto id = std::make_unique<std::string>(std::move(session));
  co_await queue.Acquire(*id);
  log.began.push_back(name);
  log.most_at_once = std::max(log.most_at_once, ++log.running);
  co_await gate.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  --log.running;
  queue.Release(*id);
  id.reset();
}

// A gate that is open from the start, or shut until Open().
struct Gate {
  explicit Gate(boost::asio::io_context& io, bool open)
      : timer(io, open ? boost::asio::steady_timer::time_point::min() : boost::asio::steady_timer::time_point::max()) {}
  void Open() { timer.expires_at(boost::asio::steady_timer::time_point::min()); }  // wakes those waiting too
  boost::asio::steady_timer timer;
};

TEST(SessionQueueTest, ASessionsTurnsRunOneAtATimeInArrivalOrder) {
  boost::asio::io_context io;
  SessionQueue queue;
  Gate open(io, true);
  Log log;
  for (const char* name : {"first", "second", "third", "fourth"}) {
    boost::asio::co_spawn(io, Turn(queue, kSession, name, log, open.timer), boost::asio::detached);
  }
  io.run();
  EXPECT_EQ(log.began, (std::vector<std::string>{"first", "second", "third", "fourth"}));
  EXPECT_EQ(log.most_at_once, 1);
}

TEST(SessionQueueTest, AnotherSessionsTurnDoesNotWaitBehindThem) {
  boost::asio::io_context io;
  SessionQueue queue;
  Gate shut(io, false);
  Log same, other;
  boost::asio::co_spawn(io, Turn(queue, kSession, "first", same, shut.timer), boost::asio::detached);
  boost::asio::co_spawn(io, Turn(queue, kSession, "second", same, shut.timer), boost::asio::detached);
  boost::asio::co_spawn(io, Turn(queue, std::string(kSession) + "x", "other", other, shut.timer), boost::asio::detached);
  io.poll();
  // The first turn holds its session and the other session's turn runs beside it; the
  // second waits for the first.
  EXPECT_EQ(same.began, (std::vector<std::string>{"first"}));
  EXPECT_EQ(other.began, (std::vector<std::string>{"other"}));
  shut.Open();
  io.run();
  EXPECT_EQ(same.began, (std::vector<std::string>{"first", "second"}));
}

TEST(SessionQueueTest, ASessionWhoseTurnsAllLeftIsFreeAgain) {
  boost::asio::io_context io;
  SessionQueue queue;
  Gate open(io, true);
  Log log;
  boost::asio::co_spawn(io, Turn(queue, kSession, "first", log, open.timer), boost::asio::detached);
  boost::asio::co_spawn(io, Turn(queue, kSession, "second", log, open.timer), boost::asio::detached);
  io.run();
  io.restart();
  // Nothing of the earlier turns holds the session: a new turn begins at once, beside
  // nothing, while one still waiting behind a line left over would not.
  Gate shut(io, false);
  boost::asio::co_spawn(io, Turn(queue, kSession, "later", log, shut.timer), boost::asio::detached);
  io.poll();
  EXPECT_EQ(log.began.back(), "later");
  shut.Open();
  io.run();
}

}  // namespace
}  // namespace reins

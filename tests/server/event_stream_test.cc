// EventStream: what the runtime pushes reaches the SSE connection, and the end of the
// turn ends the stream, however the push and the connection's writes interleave.
#include "server/event_stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace reins {
namespace {

namespace asio = boost::asio;

// A connection whose every write takes a moment, during which `during_write` runs: the
// runtime pushing or finishing while the connection's write is out.
class SlowConnection final : public ServerResponse {
 public:
  std::vector<std::string> events;
  int heartbeats = 0;
  std::function<void()> during_write;

  Task<void> Respond(int, std::string, std::string, std::map<std::string, std::string>) override { co_return; }
  Task<Status> StartBody(std::string) override { co_return OkStatus(); }
  Task<Status> SendChunk(std::string) override { co_return OkStatus(); }
  Task<Status> EndBody() override { co_return OkStatus(); }
  Task<Status> StartStream(std::map<std::string, std::string>) override { co_return OkStatus(); }
  Task<Status> Send(std::string_view event, std::string_view) override {
    events.emplace_back(event);
    if (auto f = std::exchange(during_write, nullptr)) f();
    asio::steady_timer write(co_await asio::this_coro::executor);
    write.expires_after(std::chrono::milliseconds(5));
    co_await write.async_wait(asio::use_awaitable);
    co_return OkStatus();
  }
  Task<Status> Heartbeat() override {
    ++heartbeats;
    co_return OkStatus();
  }
  int status() const override { return 200; }
};

TraceEvent Delta(const char* text) {
  TraceEvent e;
  e.type = EventType::kReplyDelta;
  e.data = Json{{"text", text}};
  return e;
}

// Runs Pump until it returns or `limit` passes; the heartbeat is far beyond the limit,
// so a Pump that sleeps through a wake is caught rather than rescued by a heartbeat.
std::optional<bool> PumpFor(asio::io_context& io, EventStream& stream, SlowConnection& connection,
                            std::chrono::milliseconds limit) {
  std::optional<bool> finished;
  asio::co_spawn(io, [&]() -> Task<void> { finished = co_await stream.Pump(connection, 60000); }, asio::detached);
  io.run_for(limit);
  return finished;
}

TEST(EventStream, TheEndOfTheTurnDuringAWriteEndsTheStream) {
  asio::io_context io;
  auto stream = std::make_shared<EventStream>(io.get_executor());
  SlowConnection connection;
  stream->PushTurnEvent(Delta("Hello. "));
  connection.during_write = [&] { stream->Finish(); };
  EXPECT_EQ(PumpFor(io, *stream, connection, std::chrono::seconds(2)), std::optional<bool>(true));
  EXPECT_EQ(connection.events, std::vector<std::string>{"reply.delta"});
  EXPECT_EQ(connection.heartbeats, 0);
}

TEST(EventStream, AnEventPushedDuringAWriteIsWrittenWithoutWaiting) {
  asio::io_context io;
  auto stream = std::make_shared<EventStream>(io.get_executor());
  SlowConnection connection;
  stream->PushTurnEvent(Delta("Hello. "));
  connection.during_write = [&] {
    stream->PushTurnEvent(Delta("Again. "));
    connection.during_write = [&] { stream->Finish(); };
  };
  EXPECT_EQ(PumpFor(io, *stream, connection, std::chrono::seconds(2)), std::optional<bool>(true));
  EXPECT_EQ(connection.events, (std::vector<std::string>{"reply.delta", "reply.delta"}));
}

TEST(EventStream, AnIdleStreamSendsHeartbeatsUntilItIsFinished) {
  asio::io_context io;
  auto stream = std::make_shared<EventStream>(io.get_executor());
  SlowConnection connection;
  std::optional<bool> finished;
  asio::co_spawn(io, [&]() -> Task<void> { finished = co_await stream->Pump(connection, 20); }, asio::detached);
  // Finished after its third heartbeat, however late a busy machine runs them.
  asio::co_spawn(io, [&]() -> Task<void> {
    asio::steady_timer poll(co_await asio::this_coro::executor);
    while (connection.heartbeats < 3) {
      poll.expires_after(std::chrono::milliseconds(5));
      co_await poll.async_wait(asio::use_awaitable);
    }
    stream->Finish();
  }, asio::detached);
  io.run_for(std::chrono::seconds(60));  // returns once both are done
  EXPECT_EQ(finished, std::optional<bool>(true));
  EXPECT_GE(connection.heartbeats, 3);
  EXPECT_TRUE(connection.events.empty());
}

}  // namespace
}  // namespace reins

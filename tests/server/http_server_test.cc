// HttpServer's deadlines on its connections (net/socket_deadline.h): a request that does
// not come whole within the idle timeout, and a kept-alive connection with no next
// request, are closed; a request that comes in time is answered. And responses held by
// their handler (ServerResponse::Hold): answered later, or with a 500 when let go
// unanswered, the connection going on after either; a stopping server answers them.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "server/http_server.h"

namespace reins {
namespace {

using Clock = std::chrono::steady_clock;

Task<void> AnswerOk(const ServerRequest&, ServerResponse& answer) { co_await answer.Respond(200, "text/plain", "ok", {}); }

// A server on a free port whose connections wait `idle_timeout_ms` for a request; it
// answers every request with `handler` (200 "ok" unless told otherwise), on one thread.
class Served {
 public:
  explicit Served(int idle_timeout_ms, RequestHandler handler = AnswerOk)
      : server_(io_, HttpServer::Options{.port = 0, .idle_timeout_ms = idle_timeout_ms}, std::move(handler)) {
    EXPECT_TRUE(server_.Start().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  boost::asio::io_context& io() { return io_; }
  HttpServer& server() { return server_; }
  ~Served() {
    server_.Stop();
    work_.reset();
    io_.stop();
    thread_.join();
  }
  int port() const { return server_.port(); }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  HttpServer server_;
  std::thread thread_;
};

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Appends what comes to `got` until the server closes the connection (true), `needle`
// (when not empty) has come, or `within_ms` pass (false).
bool Receive(int fd, int within_ms, std::string& got, std::string_view needle = {}) {
  const auto end = Clock::now() + std::chrono::milliseconds(within_ms);
  char buf[512];
  while (Clock::now() < end && (needle.empty() || got.find(needle) == std::string::npos)) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 1))) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
    got.append(buf, static_cast<size_t>(n));
  }
  return false;
}

bool ClosedWithin(int fd, int within_ms, std::string& got) { return Receive(fd, within_ms, got); }

TEST(HttpServerDeadlines, AHalfSentRequestIsClosedAtTheIdleTimeout) {
  Served served(150);
  const int fd = Connect(served.port());
  const std::string half = "GET /x HTTP/1.1\r\nHost: x\r\n";  // the head never ends
  ASSERT_EQ(send(fd, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
  const auto start = Clock::now();
  std::string got;
  EXPECT_TRUE(ClosedWithin(fd, 60000, got)) << "the connection was still open after a minute";
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(100)) << "closed before its timeout";
  EXPECT_EQ(got, "") << "a request that never came whole is not answered";
  close(fd);
}

TEST(HttpServerDeadlines, AHalfSentBodyIsClosedAtTheIdleTimeout) {
  Served served(150);
  const int fd = Connect(served.port());
  const std::string part = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345";
  ASSERT_EQ(send(fd, part.data(), part.size(), MSG_NOSIGNAL), static_cast<ssize_t>(part.size()));
  std::string got;
  EXPECT_TRUE(ClosedWithin(fd, 60000, got)) << "the connection was still open after a minute";
  EXPECT_EQ(got, "");
  close(fd);
}

TEST(HttpServerDeadlines, AKeptAliveConnectionIsAnsweredThenClosedWhenIdle) {
  Served served(200);
  const int fd = Connect(served.port());
  const std::string request = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string got;
  EXPECT_TRUE(ClosedWithin(fd, 60000, got));
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("\r\n\r\nok"), std::string::npos) << got;
  close(fd);
}

// Reads until `needle` has come (true), `within_ms` pass or the connection closes.
bool ReadUntil(int fd, const std::string& needle, int within_ms, std::string& got) {
  Receive(fd, within_ms, got, needle);
  return got.find(needle) != std::string::npos;
}

void SendAll(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// The kept-alive connection `fd` reads and answers its next request.
void ExpectsItsNextRequest(int fd) {
  SendAll(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got;
  EXPECT_TRUE(ReadUntil(fd, "\r\n\r\nok", 60000, got)) << got;
}

// A request that came with the one before it is read from the bytes the connection
// kept: a connection waits on its socket only when it has none (the wait would last
// until the idle timeout, the second request unanswered).
TEST(HttpServerDeadlines, APipelinedRequestIsAnsweredFromTheBytesAlreadyRead) {
  Served served(5000);
  const int fd = Connect(served.port());
  SendAll(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got;
  const auto answers = [&] {
    size_t n = 0;
    for (size_t at = got.find("\r\n\r\nok"); at != std::string::npos; at = got.find("\r\n\r\nok", at + 1)) ++n;
    return n;
  };
  const auto end = Clock::now() + std::chrono::seconds(60);
  while (answers() < 2 && Clock::now() < end) Receive(fd, 100, got, "never");
  EXPECT_EQ(answers(), 2u) << got;
  ExpectsItsNextRequest(fd);  // and the connection, its buffer empty again, waits for the next
  close(fd);
}

// Handlers that hold their response (ServerResponse::Hold): GET /held is answered once
// the test lets it (Release), after its handler returned, by a coroutine of its own; GET
// /dropped is let go unanswered; anything else gets 200 "ok" at once. `answered`
// collects the statuses the held responses were answered with.
class Holding {
 public:
  Holding() : served_(60000, [this](const ServerRequest& req, ServerResponse& answer) { return Handle(req, answer); }) {}
  int port() { return served_.port(); }
  HttpServer& server() { return served_.server(); }
  std::vector<int> answered() {
    std::lock_guard lock(mu_);
    return answered_;
  }
  // Waits (a minute at most) until a handler has held its response.
  bool AwaitHeld() {
    const auto by = Clock::now() + std::chrono::seconds(60);
    while (held_ == 0 && Clock::now() < by) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return held_ > 0;
  }
  // Lets the held /held response be answered (on the server's thread, as a timer must).
  void Release() {
    std::shared_ptr<boost::asio::steady_timer> gate;
    {
      std::lock_guard lock(mu_);
      gate = gate_;
    }
    // Due now: a wait under way ends, one that has not begun yet does not wait.
    if (gate) boost::asio::post(served_.io(), [gate] { gate->expires_after(std::chrono::milliseconds(0)); });
  }

 private:
  Task<void> Handle(const ServerRequest& req, ServerResponse& answer) {
    if (req.path != "/held" && req.path != "/dropped") co_return co_await answer.Respond(200, "text/plain", "ok", {});
    std::shared_ptr<ServerResponse> held = answer.Hold([this](int status) {
      std::lock_guard lock(mu_);
      answered_.push_back(status);
    });
    EXPECT_NE(held, nullptr);
    EXPECT_TRUE(answer.held());
    EXPECT_EQ(answer.Hold(nullptr), nullptr) << "held twice";
    if (req.path == "/held") {
      auto gate = std::make_shared<boost::asio::steady_timer>(served_.io(), boost::asio::steady_timer::time_point::max());
      {
        std::lock_guard lock(mu_);
        gate_ = gate;
      }
      boost::asio::co_spawn(served_.io(), AnswerLater(std::move(held), std::move(gate)), boost::asio::detached);
    }
    ++held_;
  }
  static Task<void> AnswerLater(std::shared_ptr<ServerResponse> held, std::shared_ptr<boost::asio::steady_timer> gate) {
    (void)co_await gate->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));  // cancelled by Release
    co_await held->Respond(200, "text/plain", "later", {});
  }

  Served served_;
  std::mutex mu_;
  std::vector<int> answered_;
  std::shared_ptr<boost::asio::steady_timer> gate_;  // the /held response's, once it came
  std::atomic<int> held_{0};
};

TEST(HeldResponses, AreAnsweredAfterTheHandlerReturnedAndTheConnectionGoesOn) {
  Holding holding;
  const int fd = Connect(holding.port());
  SendAll(fd, "GET /held HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got;
  ASSERT_TRUE(holding.AwaitHeld()) << "the request never reached its handler";
  EXPECT_FALSE(ReadUntil(fd, "later", 60, got)) << "answered before it was: " << got;
  EXPECT_EQ(holding.server().open_connections(), 1) << "a held connection is open";
  holding.Release();
  ASSERT_TRUE(ReadUntil(fd, "later", 60000, got)) << got;
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  ExpectsItsNextRequest(fd);
  EXPECT_EQ(holding.answered(), std::vector<int>{200});
  close(fd);
}

TEST(HeldResponses, OneLetGoUnansweredGetsA500AndTheConnectionGoesOn) {
  Holding holding;
  const int fd = Connect(holding.port());
  SendAll(fd, "GET /dropped HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got;
  ASSERT_TRUE(ReadUntil(fd, "the handler wrote no response", 60000, got)) << got;
  EXPECT_EQ(got.rfind("HTTP/1.1 500 ", 0), 0u) << got;
  ExpectsItsNextRequest(fd);
  EXPECT_EQ(holding.answered(), std::vector<int>{500});
  close(fd);
}

TEST(HeldResponses, AStoppingServerAnswersThemThenCloses) {
  Holding holding;
  const int fd = Connect(holding.port());
  SendAll(fd, "GET /held HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got;
  ASSERT_TRUE(holding.AwaitHeld()) << "the request never reached its handler";
  EXPECT_FALSE(ReadUntil(fd, "later", 60, got));
  holding.server().Stop();
  holding.Release();  // answered while the server stops
  EXPECT_TRUE(ClosedWithin(fd, 60000, got)) << "still open after its answer";
  EXPECT_NE(got.find("\r\n\r\nlater"), std::string::npos) << "the request in hand is answered: " << got;
  // Counted closed just after the socket closes, on the server's thread.
  const auto by = Clock::now() + std::chrono::seconds(60);
  while (holding.server().open_connections() != 0 && Clock::now() < by) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(holding.server().open_connections(), 0);
  close(fd);
}

}  // namespace
}  // namespace reins

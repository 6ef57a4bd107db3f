// HttpServer's deadlines on its connections (net/socket_deadline.h): a request that does
// not come whole within the idle timeout, and a kept-alive connection with no next
// request, are closed; a request that comes in time is answered.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "server/http_server.h"

namespace reins {
namespace {

using Clock = std::chrono::steady_clock;

// A server on a free port whose connections wait `idle_timeout_ms` for a request; it
// answers every request with 200 "ok".
class Served {
 public:
  explicit Served(int idle_timeout_ms)
      : server_(io_, HttpServer::Options{.port = 0, .idle_timeout_ms = idle_timeout_ms},
                [](const ServerRequest&, ServerResponse& answer) -> Task<void> {
                  co_await answer.Respond(200, "text/plain", "ok", {});
                }) {
    EXPECT_TRUE(server_.Start().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
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

// Reads until the server closes the connection (true) or `within_ms` pass (false);
// what came is appended to `got`.
bool ClosedWithin(int fd, int within_ms, std::string& got) {
  const auto end = Clock::now() + std::chrono::milliseconds(within_ms);
  char buf[512];
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 1))) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
    got.append(buf, static_cast<size_t>(n));
  }
  return false;
}

TEST(HttpServerDeadlines, AHalfSentRequestIsClosedAtTheIdleTimeout) {
  Served served(150);
  const int fd = Connect(served.port());
  const std::string half = "GET /x HTTP/1.1\r\nHost: x\r\n";  // the head never ends
  ASSERT_EQ(send(fd, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
  const auto start = Clock::now();
  std::string got;
  EXPECT_TRUE(ClosedWithin(fd, 3000, got)) << "the connection was still open after 3 s";
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
  EXPECT_TRUE(ClosedWithin(fd, 3000, got)) << "the connection was still open after 3 s";
  EXPECT_EQ(got, "");
  close(fd);
}

TEST(HttpServerDeadlines, AKeptAliveConnectionIsAnsweredThenClosedWhenIdle) {
  Served served(200);
  const int fd = Connect(served.port());
  const std::string request = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string got;
  EXPECT_TRUE(ClosedWithin(fd, 3000, got));
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("\r\n\r\nok"), std::string::npos) << got;
  close(fd);
}

}  // namespace
}  // namespace reins

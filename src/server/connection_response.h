// ConnectionResponse: what HttpServer writes to one connection (a whole response, a
// chunked body, or an SSE stream), and the answers the server makes itself. Shared by
// the server's files (http_server.cc, http_connection.cc), which alone include it.
#pragma once

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>

#include "net/no_throw.h"
#include "net/socket_deadline.h"
#include "net/write_now.h"
#include "server/http_server.h"
#include "server/request_head.h"

namespace reins::served {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

constexpr int kWriteTimeoutMs = 30000;
// GCC 12 cannot compile a string literal in a full-expression that holds a co_await
// ("array used as initializer"): the coroutines take their literals from here.
constexpr const char* kJson = "application/json";
constexpr const char* kHeartbeat = ": heartbeat\n\n";
constexpr const char* kStreamHead =
    "HTTP/1.1 200 OK\r\nServer: reins\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n";
constexpr const char* kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr const char* kExpectContinue = "100-continue";

inline SocketDeadline::Clock::time_point After(int ms) {
  return SocketDeadline::Clock::now() + std::chrono::milliseconds(ms);
}

// The server's own answers, as JSON error bodies.
std::string ErrorBody(const std::string& code, const std::string& message);
std::string TooLarge(size_t limit);
std::string Malformed(const std::string& why);
std::string NoResponse();
std::string Refused(const RequestRefusal& r);
std::string HeadTooLarge();
// Written whole to a connection the server cannot serve (too many open, or no file
// descriptor left): small enough to fit any socket buffer at once.
std::string BusyResponse();
// The status line and header fields of a whole response, as they go on the wire.
std::string ResponseHead(int status, std::string_view content_type, const std::map<std::string, std::string>& headers,
                         bool keep_alive, size_t body_bytes);

// Writes to one connection: a whole response, or an SSE stream.
class ConnectionResponse final : public ServerResponse {
 public:
  ConnectionResponse(tcp::socket& socket, bool keep_alive) : socket_(socket), keep_alive_(keep_alive) {}

  Task<void> Respond(int status, std::string content_type, std::string body,
                     std::map<std::string, std::string> headers) override {
    const std::string head = ResponseHead(status, content_type, headers, keep_alive_, body.size());
    const std::array<asio::const_buffer, 2> whole = {asio::buffer(head), asio::buffer(body)};
    status_ = status;
    beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(whole);
    rest.consume(WriteNow(socket_, whole));
    if (beast::buffer_bytes(rest) == 0) co_return;
    SocketDeadline deadline(socket_, After(kWriteTimeoutMs));
    auto write = asio::async_write(socket_, rest, kNoThrow);
    auto [ec, n] = co_await std::move(write);
    if (deadline.End() || ec) keep_alive_ = false;
  }

  Task<Status> StartStream(std::map<std::string, std::string> headers) override {
    status_ = 200;
    streaming_ = true;
    keep_alive_ = false;  // the stream ends when the connection closes
    std::string head = kStreamHead;
    for (const auto& [name, value] : headers) head.insert(head.size() - 2, name + ": " + value + "\r\n");
    co_return co_await Write(std::move(head));
  }

  Task<Status> Send(std::string_view event, std::string_view data) override {
    std::string frame = event.empty() ? "" : "event: " + std::string(event) + "\n";
    size_t start = 0;
    for (size_t nl; (nl = data.find('\n', start)) != std::string_view::npos; start = nl + 1) {
      frame += "data: " + std::string(data.substr(start, nl - start)) + "\n";
    }
    frame += "data: " + std::string(data.substr(start)) + "\n\n";
    co_return co_await Write(std::move(frame));
  }

  Task<Status> Heartbeat() override { co_return co_await Write(std::string(kHeartbeat)); }

  Task<Status> StartBody(std::string content_type) override {
    status_ = 200;
    std::string head = "HTTP/1.1 200 OK\r\nServer: reins\r\nContent-Type: " + content_type +
                       "\r\nTransfer-Encoding: chunked\r\n" + (keep_alive_ ? "" : "Connection: close\r\n") + "\r\n";
    co_return co_await Write(std::move(head));
  }

  Task<Status> SendChunk(std::string bytes) override {
    if (bytes.empty()) co_return OkStatus();  // an empty chunk would end the body
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
    co_return co_await Write(size + std::move(bytes) + "\r\n");
  }

  Task<Status> EndBody() override {
    Status written = co_await Write(std::string("0\r\n\r\n"));
    if (!written.ok()) keep_alive_ = false;
    co_return written;
  }

  int status() const override { return status_; }
  bool responded() const { return status_ != 0; }
  bool keep_alive() const { return keep_alive_ && !streaming_ && !gone_; }

  // Where Hold takes the connection (HttpServer::Impl::ServeOne); unset: not holdable.
  using Holder = std::function<std::shared_ptr<ServerResponse>(bool keep_alive, std::function<void(int)> answered)>;
  void set_holder(Holder holder) { holder_ = std::move(holder); }
  std::shared_ptr<ServerResponse> Hold(std::function<void(int status)> answered) override {
    if (!holder_ || held_ || responded()) return nullptr;
    held_ = true;
    return holder_(keep_alive(), std::move(answered));
  }
  bool held() const override { return held_; }

 private:
  Task<Status> Write(std::string bytes) {
    if (gone_) co_return Unavailable("the client went away");
    const size_t sent = WriteNow(socket_, asio::buffer(bytes));
    if (sent == bytes.size()) co_return OkStatus();
    SocketDeadline deadline(socket_, After(kWriteTimeoutMs));
    auto write = asio::async_write(socket_, asio::buffer(bytes) + sent, kNoThrow);
    auto [ec, n] = co_await std::move(write);
    if (deadline.End()) ec = beast::error::timeout;
    if (ec) {
      gone_ = true;
      co_return Unavailable("the client went away: " + ec.message());
    }
    co_return OkStatus();
  }

  tcp::socket& socket_;
  Holder holder_;
  bool keep_alive_;
  bool streaming_ = false;
  bool gone_ = false;
  bool held_ = false;
  int status_ = 0;
};

}  // namespace reins::served

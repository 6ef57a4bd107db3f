#include "server/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace reins {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr int kWriteTimeoutMs = 30000;

std::string ErrorBody(const std::string& code, const std::string& message) {
  // Built by hand: this layer stays free of the JSON library.
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return R"({"error":{"code":")" + code + R"(","message":")" + escaped + R"("}})";
}

// GCC 12 cannot compile a string literal in a full-expression that holds a co_await
// ("array used as initializer"): the coroutines take their literals from here.
constexpr const char* kJson = "application/json";
constexpr const char* kHeartbeat = ": heartbeat\n\n";
constexpr const char* kStreamHead =
    "HTTP/1.1 200 OK\r\nServer: reins\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n";
std::string TooLarge(size_t limit) {
  return ErrorBody("body_too_large", "the request body is larger than " + std::to_string(limit) + " bytes");
}
std::string Malformed(const std::string& why) { return ErrorBody("bad_request", "malformed HTTP request: " + why); }
std::string NoResponse() { return ErrorBody("internal", "the handler wrote no response"); }

// Writes to one connection: a whole response, or an SSE stream.
class ConnectionResponse final : public ServerResponse {
 public:
  ConnectionResponse(beast::tcp_stream& stream, bool keep_alive) : stream_(stream), keep_alive_(keep_alive) {}

  Task<void> Respond(int status, std::string content_type, std::string body,
                     std::map<std::string, std::string> headers) override {
    http::response<http::string_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::server, "reins");
    if (!content_type.empty()) res.set(http::field::content_type, content_type);
    for (const auto& [name, value] : headers) res.set(name, value);
    res.keep_alive(keep_alive_);
    res.body() = std::move(body);
    res.prepare_payload();
    status_ = status;
    stream_.expires_after(std::chrono::milliseconds(kWriteTimeoutMs));
    auto [ec, n] = co_await http::async_write(stream_, res, kNoThrow);
    if (ec) keep_alive_ = false;
  }

  Task<Status> StartStream() override {
    status_ = 200;
    streaming_ = true;
    keep_alive_ = false;  // the stream ends when the connection closes
    co_return co_await Write(std::string(kStreamHead));
  }

  Task<Status> Send(std::string_view event, std::string_view data) override {
    std::string frame = "event: " + std::string(event) + "\n";
    size_t start = 0;
    for (size_t nl; (nl = data.find('\n', start)) != std::string_view::npos; start = nl + 1) {
      frame += "data: " + std::string(data.substr(start, nl - start)) + "\n";
    }
    frame += "data: " + std::string(data.substr(start)) + "\n\n";
    co_return co_await Write(std::move(frame));
  }

  Task<Status> Heartbeat() override { co_return co_await Write(std::string(kHeartbeat)); }

  int status() const override { return status_; }
  bool responded() const { return status_ != 0; }
  bool keep_alive() const { return keep_alive_ && !streaming_; }

 private:
  Task<Status> Write(std::string bytes) {
    if (gone_) co_return Unavailable("the client went away");
    stream_.expires_after(std::chrono::milliseconds(kWriteTimeoutMs));
    auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(bytes), kNoThrow);
    if (ec) {
      gone_ = true;
      co_return Unavailable("the client went away: " + ec.message());
    }
    co_return OkStatus();
  }

  beast::tcp_stream& stream_;
  bool keep_alive_;
  bool streaming_ = false;
  bool gone_ = false;
  int status_ = 0;
};

}  // namespace

std::string ServerRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io, Options o, RequestHandler h)
      : io(io), options(std::move(o)), handler(std::move(h)), acceptor(asio::make_strand(io)) {}

  asio::io_context& io;
  Options options;
  RequestHandler handler;
  tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  std::atomic<int> open{0};
  int bound_port = 0;

  // Connections waiting for their next request, closed at once by Stop().
  std::mutex mu;
  uint64_t next_id = 0;
  std::map<uint64_t, beast::tcp_stream*> idle;

  Task<void> Accept();
  Task<void> Serve(tcp::socket socket);
  Task<bool> ServeOne(beast::tcp_stream& stream, beast::flat_buffer& buffer, uint64_t id, const std::string& remote);
  void SetIdle(uint64_t id, beast::tcp_stream* stream) {
    std::lock_guard lock(mu);
    if (stream) idle[id] = stream; else idle.erase(id);
  }
};

Task<void> HttpServer::Impl::Accept() {
  auto self = shared_from_this();
  while (!stopping) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(io), kNoThrow);
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      continue;  // e.g. too many open files: keep serving the connections we have
    }
    asio::co_spawn(socket.get_executor(), Serve(std::move(socket)), asio::detached);
  }
}

Task<void> HttpServer::Impl::Serve(tcp::socket socket) {
  auto self = shared_from_this();
  ++open;
  uint64_t id;
  {
    std::lock_guard lock(mu);
    id = next_id++;
  }
  beast::error_code ignored;
  tcp::endpoint peer = socket.remote_endpoint(ignored);
  std::string remote = peer.address().to_string() + ":" + std::to_string(peer.port());
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  while (!stopping && co_await ServeOne(stream, buffer, id, remote)) {
  }
  SetIdle(id, nullptr);
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream.close();
  --open;
}

// Reads and answers one request. False when the connection should close.
Task<bool> HttpServer::Impl::ServeOne(beast::tcp_stream& stream, beast::flat_buffer& buffer, uint64_t id,
                                      const std::string& remote) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(options.max_body_bytes);
  parser.header_limit(64 * 1024);
  stream.expires_after(std::chrono::milliseconds(options.idle_timeout_ms));
  SetIdle(id, &stream);
  auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow);
  SetIdle(id, nullptr);
  if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
    co_return false;
  }
  ConnectionResponse response(stream, false);
  if (ec == http::error::body_limit) {
    std::string body = TooLarge(options.max_body_bytes);
    co_await response.Respond(413, std::string(kJson), std::move(body), {});
    co_return false;
  }
  if (ec) {
    std::string body = Malformed(ec.message());
    co_await response.Respond(400, std::string(kJson), std::move(body), {});
    co_return false;
  }
  http::request<http::string_body> msg = parser.release();
  ServerRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.path = req.target.substr(0, req.target.find('?'));
  for (const auto& field : msg) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    req.headers[name] = std::string(field.value());
  }
  req.body = std::move(msg.body());
  req.remote = remote;
  stream.expires_never();  // a turn may take as long as its own timeouts allow
  ConnectionResponse answer(stream, msg.keep_alive() && !stopping);
  co_await handler(req, answer);
  if (!answer.responded()) {
    std::string body = NoResponse();
    co_await answer.Respond(500, std::string(kJson), std::move(body), {});
  }
  co_return answer.keep_alive();
}

HttpServer::HttpServer(asio::io_context& io, Options options, RequestHandler handler)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  beast::error_code ec;
  auto address = asio::ip::make_address(impl_->options.host, ec);
  if (ec) return InvalidArgument("cannot listen on '" + impl_->options.host + "': not an IP address");
  tcp::endpoint endpoint(address, static_cast<unsigned short>(impl_->options.port));
  tcp::acceptor& a = impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen on " + impl_->options.host + ":" + std::to_string(impl_->options.port) + ": " +
                       ec.message());
  }
  impl_->bound_port = a.local_endpoint().port();
  asio::co_spawn(a.get_executor(), impl_->Accept(), asio::detached);
  return OkStatus();
}

int HttpServer::port() const { return impl_->bound_port; }
int HttpServer::open_connections() const { return impl_->open; }

void HttpServer::Stop() {
  if (impl_->stopping.exchange(true)) return;
  auto impl = impl_;
  asio::post(impl->acceptor.get_executor(), [impl] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
  });
  std::lock_guard lock(impl->mu);
  for (auto& [id, stream] : impl->idle) {
    asio::post(stream->get_executor(), [impl, id = id] {
      std::lock_guard inner(impl->mu);
      if (auto it = impl->idle.find(id); it != impl->idle.end()) it->second->cancel();
    });
  }
}

Task<void> HttpServer::Drain(int deadline_ms) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  while (impl_->open > 0 && std::chrono::steady_clock::now() < end) {
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(kNoThrow);
  }
}

}  // namespace reins

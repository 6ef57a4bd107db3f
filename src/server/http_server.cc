#include "server/http_server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "domain/text.h"
#include "net/io_threads.h"
#include "net/no_throw.h"
#include "net/socket_deadline.h"
#include "net/wait_readable.h"
#include "net/write_now.h"
#include "reins/json.h"
#include "server/request_head.h"

namespace reins {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr int kWriteTimeoutMs = 30000;

SocketDeadline::Clock::time_point After(int ms) { return SocketDeadline::Clock::now() + std::chrono::milliseconds(ms); }

std::string ErrorBody(const std::string& code, const std::string& message) {
  Json body = {{"error", {{"code", code}, {"message", message}}}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
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
std::string Refused(const RequestRefusal& r) { return ErrorBody(r.code, r.message); }
std::string HeadTooLarge() {
  return ErrorBody("headers_too_large", "the request head is larger than " + std::to_string(kMaxRequestHeadBytes >> 10) + " KiB");
}
constexpr const char* kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr const char* kExpectContinue = "100-continue";
// Written whole to a connection the server cannot serve (too many open, or no file
// descriptor left): small enough to fit any socket buffer at once.
std::string BusyResponse() {
  std::string body = ErrorBody("overloaded", "the server has too many open connections; retry shortly");
  return "HTTP/1.1 503 Service Unavailable\r\nServer: reins\r\nContent-Type: application/json\r\n"
         "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The status line and header fields of a whole response, as they go on the wire. Written
// here rather than by Beast's serializer, whose buffer sequences cost about 17 k
// instructions per message (with the client's requests, 9 % of a served turn:
// docs/PERFORMANCE.md, round 7). A field with a line break in it (none has: the values
// are the server's own) is left out rather than split.
std::string ResponseHead(int status, std::string_view content_type, const std::map<std::string, std::string>& headers,
                         bool keep_alive, size_t body_bytes) {
  auto one_line = [](std::string_view s) { return s.find_first_of("\r\n") == std::string_view::npos; };
  std::string head;
  head.reserve(160);
  head += "HTTP/1.1 ";
  head += std::to_string(status);
  head += ' ';
  head += std::string_view(http::obsolete_reason(static_cast<http::status>(status)));
  head += "\r\nServer: reins\r\n";
  if (!content_type.empty() && one_line(content_type)) {
    head += "Content-Type: ";
    head += content_type;
    head += "\r\n";
  }
  for (const auto& [name, value] : headers) {
    if (!one_line(name) || !one_line(value)) continue;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (!keep_alive) head += "Connection: close\r\n";
  // No length on a 1xx, 204 or 304 (RFC 9110 8.6), as Beast's prepare_payload did.
  if (status >= 200 && status != 204 && status != 304) {
    head += "Content-Length: ";
    head += std::to_string(body_bytes);
    head += "\r\n";
  }
  head += "\r\n";
  return head;
}

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

// A request that cannot be read whole: why, as the status and the body of the answer.
struct ReadRefusal {
  int status = 400;
  std::string body;
};

// What a read that failed gets: nothing when the client went away or stayed silent (the
// connection just closes), else a refusal to answer first. `body`: the body's read (a
// head over the limit is known before it).
std::optional<ReadRefusal> RefusalOfRead(const beast::error_code& ec, size_t max_body_bytes, bool body) {
  if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
    return std::nullopt;
  }
  if (ec == http::error::body_limit) return ReadRefusal{413, TooLarge(max_body_bytes)};  // known from the head's length
  if (!body && ec == http::error::header_limit) return ReadRefusal{431, HeadTooLarge()};
  return ReadRefusal{400, Malformed(ec.message())};
}

// The parsed request as the handler sees it; the parser's body is moved, not copied.
void TakeRequest(RequestParser& parser, const std::string& remote, ServerRequest& req, bool* keep_alive) {
  http::request<http::string_body> msg = parser.release();
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  for (const auto& field : msg) req.AddHeader(field.name_string(), field.value());
  req.body = std::move(msg.body());
  req.remote = remote;
  *keep_alive = msg.keep_alive();
}

}  // namespace

void ServerRequest::AddHeader(std::string_view name, std::string_view value) {
  headers.append(AsciiLower(name)).append(": ").append(value).append("\r\n");
}

std::string ServerRequest::Header(std::string_view lower_name) const {
  return std::string(HeaderLineValue(headers, lower_name, Repeated::kLast));
}

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io, Options o, RequestHandler h)
      : io(io), options(std::move(o)), handler(std::move(h)), acceptor(SerialExecutor(io)) {}

  asio::io_context& io;
  Options options;
  RequestHandler handler;
  tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  std::atomic<int> open{0};
  int bound_port = 0;
  size_t accepted = 0;  // connections accepted so far: the next one's loop (Accept's only)

  // A descriptor held in reserve: when none is left, it is given up for a moment to
  // accept and refuse the client waiting in the backlog (else the acceptor reports the
  // same error at once, forever, and spins).
  int reserve_fd = -1;

  // Connections waiting for their next request, closed at once by Stop(), and those of
  // them being closed to make room (MakeRoom).
  std::mutex mu;
  uint64_t next_id = 0;
  std::map<uint64_t, tcp::socket*> idle;
  std::set<uint64_t> shedding;

  // One client's connection, on the heap: a held response takes it along.
  struct Connection {
    Connection(tcp::socket s, uint64_t i, std::string r) : socket(std::move(s)), id(i), remote(std::move(r)) {}
    tcp::socket socket;
    beast::flat_buffer buffer;
    uint64_t id;
    std::string remote;
  };
  // How a held response ended, for the connection to go on from (Serve); `answered`
  // still to be told when nothing was.
  struct HeldEnd {
    bool responded = false;
    bool keep_alive = false;
    std::function<void(int)> answered;
  };
  class HeldResponse;
  enum class Next { kRead, kClose, kHeld };

  Task<void> Accept();
  void ShedOneWaitingClient();
  bool MakeRoom();
  // Serves the connection's requests until it closes or a response is held; `held`: a
  // held response that ended, to finish first.
  Task<void> Serve(std::unique_ptr<Connection> conn, std::optional<HeldEnd> held);
  Task<Next> ServeOne(std::unique_ptr<Connection>& conn);
  Task<bool> FinishHeld(Connection& conn, HeldEnd& held);
  void Close(Connection& conn);
  Task<void> RespondNothing(ServerResponse& answer);
  Task<bool> ReadRequest(tcp::socket& socket, beast::flat_buffer& buffer, uint64_t id, const std::string& remote,
                         ServerRequest& req, bool* keep_alive);
  static std::optional<ReadRefusal> ScreenHead(const http::request_header<>& head, ServerRequest& req);
  static Task<bool> Refuse(tcp::socket& socket, std::optional<ReadRefusal> refused);
  // A read that failed, refused as RefusalOfRead says. Not a coroutine: the refusal is
  // built here, not as a temporary of the reading frame, which waits for every request.
  Task<bool> RefuseRead(tcp::socket& socket, const beast::error_code& ec, bool body) const {
    return Refuse(socket, RefusalOfRead(ec, options.max_body_bytes, body));
  }
  void SetIdle(uint64_t id, tcp::socket* socket) {
    std::lock_guard lock(mu);
    if (socket) {
      idle[id] = socket;
    } else {
      idle.erase(id);
      shedding.erase(id);
    }
  }
};

Task<void> HttpServer::Impl::Accept() {
  auto self = shared_from_this();
  asio::steady_timer backoff(acceptor.get_executor());
  int backoff_ms = 0;
  while (!stopping) {
    tcp::endpoint peer;  // filled by accept itself: no getpeername per connection
    asio::io_context& loop = options.loops.empty() ? io : *options.loops[accepted++ % options.loops.size()];
    auto accept = acceptor.async_accept(SerialExecutor(loop), peer, kNoThrow);
    auto [ec, socket] = co_await std::move(accept);
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) break;
      if (ec == asio::error::no_descriptors || ec.value() == EMFILE || ec.value() == ENFILE) {
        ShedOneWaitingClient();
        backoff_ms = std::clamp(backoff_ms * 2, 10, 1000);
        backoff.expires_after(std::chrono::milliseconds(backoff_ms));
        auto wait = backoff.async_wait(kNoThrow);
        co_await std::move(wait);
      }
      continue;
    }
    backoff_ms = 0;
    if (!MakeRoom()) {
      // Refused at once, without reading the request: a small blocking write to a
      // fresh socket does not block, and the descriptor is back within the call.
      beast::error_code ignored;
      asio::write(socket, asio::buffer(BusyResponse()), ignored);
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
      if (options.on_refused) options.on_refused("max_connections");
      continue;
    }
    ++open;
    uint64_t id;
    {
      std::lock_guard lock(mu);
      id = next_id++;
    }
    // Non-blocking: an answer goes into the socket at once where it fits (WriteNow), and
    // a body that came with its head is read at once (ReadRequest), without a wait.
    beast::error_code ignored;
    socket.non_blocking(true, ignored);
    const asio::any_io_executor executor = socket.get_executor();
    auto conn = std::make_unique<Connection>(std::move(socket), id,
                                             peer.address().to_string() + ":" + std::to_string(peer.port()));
    asio::co_spawn(executor, Serve(std::move(conn), std::nullopt), asio::detached);
  }
}

// True when one more connection fits. A connection being closed to make room no longer
// counts: on several event loops its close runs on its own loop, and the next client
// may come first, which must not cost a second idle connection. When every connection
// is open, the one that has waited longest for a request (the oldest idle one, which a
// client holding sockets open owns) is closed to make room, as a head timeout cut short
// would. False when none waits, or when as many as kMaxShedding are still closing (each
// lets one more in until it is gone).
bool HttpServer::Impl::MakeRoom() {
  constexpr size_t kMaxShedding = 64;
  std::lock_guard lock(mu);
  if (open - static_cast<int>(shedding.size()) < options.max_connections) return true;
  if (shedding.size() >= kMaxShedding) return false;
  for (const auto& [id, socket] : idle) {  // by id: the oldest connection first
    if (shedding.count(id)) continue;
    shedding.insert(id);
    asio::post(socket->get_executor(), [self = shared_from_this(), id = id] {
      std::lock_guard inner(self->mu);
      if (auto it = self->idle.find(id); it != self->idle.end()) it->second->cancel();
    });
    if (options.on_refused) options.on_refused("idle_shed");
    return true;
  }
  return false;
}

void HttpServer::Impl::ShedOneWaitingClient() {
  if (reserve_fd < 0) return;
  ::close(reserve_fd);
  int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    const std::string busy = BusyResponse();
    (void)!::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
    if (options.on_refused) options.on_refused("fd_exhausted");
  }
  reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

// A response held by its handler (ServerResponse::Hold): the connection, which waits
// with it as data; once let go, a coroutine of the server's goes on with the connection.
class HttpServer::Impl::HeldResponse final : public ServerResponse {
 public:
  HeldResponse(std::shared_ptr<Impl> server, std::unique_ptr<Connection> conn, bool keep_alive,
               std::function<void(int)> answered)
      : server_(std::move(server)), conn_(std::move(conn)), answer_(conn_->socket, keep_alive),
        answered_(std::move(answered)) {}
  HeldResponse(const HeldResponse&) = delete;
  HeldResponse& operator=(const HeldResponse&) = delete;
  ~HeldResponse() override {
    // Told at once, as a handler that answers is followed at once by its caller: the
    // connection goes on in a coroutine posted from here.
    if (answer_.responded() && answered_) std::exchange(answered_, nullptr)(answer_.status());
    HeldEnd end{answer_.responded(), answer_.keep_alive(), std::move(answered_)};
    const asio::any_io_executor executor = conn_->socket.get_executor();
    asio::co_spawn(executor, server_->Serve(std::move(conn_), std::move(end)), asio::detached);
  }

  Task<void> Respond(int status, std::string content_type, std::string body,
                     std::map<std::string, std::string> headers) override {
    return answer_.Respond(status, std::move(content_type), std::move(body), std::move(headers));
  }
  Task<Status> StartBody(std::string content_type) override { return answer_.StartBody(std::move(content_type)); }
  Task<Status> SendChunk(std::string bytes) override { return answer_.SendChunk(std::move(bytes)); }
  Task<Status> EndBody() override { return answer_.EndBody(); }
  Task<Status> StartStream(std::map<std::string, std::string> headers) override {
    return answer_.StartStream(std::move(headers));
  }
  Task<Status> Send(std::string_view event, std::string_view data) override { return answer_.Send(event, data); }
  Task<Status> Heartbeat() override { return answer_.Heartbeat(); }
  int status() const override { return answer_.status(); }

 private:
  std::shared_ptr<Impl> server_;
  std::unique_ptr<Connection> conn_;
  ConnectionResponse answer_;
  std::function<void(int)> answered_;
};

Task<void> HttpServer::Impl::Serve(std::unique_ptr<Connection> conn, std::optional<HeldEnd> held) {
  auto self = shared_from_this();
  bool next = !held || co_await FinishHeld(*conn, *held);
  held.reset();
  while (next && !stopping) {
    const Next after = co_await ServeOne(conn);
    if (after == Next::kHeld) co_return;  // the held response has the connection now
    next = after == Next::kRead;
  }
  Close(*conn);
}

// The end of a held response: the 500 of a handler that answered nothing, then its
// `answered`. True when the connection stays open.
Task<bool> HttpServer::Impl::FinishHeld(Connection& conn, HeldEnd& held) {
  if (held.responded) co_return held.keep_alive;
  ConnectionResponse answer(conn.socket, held.keep_alive && !stopping);
  co_await RespondNothing(answer);
  if (held.answered) held.answered(answer.status());
  co_return answer.keep_alive();
}

void HttpServer::Impl::Close(Connection& conn) {
  {
    std::lock_guard lock(mu);  // no longer open and no longer being shed at once (MakeRoom)
    idle.erase(conn.id);
    shedding.erase(conn.id);
    --open;
  }
  beast::error_code ignored;
  conn.socket.shutdown(tcp::socket::shutdown_both, ignored);
  conn.socket.close(ignored);
}

// Reads and answers one request; whether the connection reads the next one, closes, or
// went with a response the handler held.
Task<HttpServer::Impl::Next> HttpServer::Impl::ServeOne(std::unique_ptr<Connection>& conn) {
  // Read in a coroutine of its own: its frame (the parser, the refusals) is gone by
  // the time the handler runs.
  bool keep_alive = false;
  ServerRequest req;
  // No deadline while the request is handled: a turn may take as long as its own
  // timeouts allow.
  if (!co_await ReadRequest(conn->socket, conn->buffer, conn->id, conn->remote, req, &keep_alive)) co_return Next::kClose;
  ConnectionResponse answer(conn->socket, keep_alive && !stopping);
  answer.set_holder([this, &conn](bool keep, std::function<void(int)> answered) -> std::shared_ptr<ServerResponse> {
    return std::make_shared<HeldResponse>(shared_from_this(), std::move(conn), keep, std::move(answered));
  });
  co_await handler(req, answer);
  if (answer.held()) co_return Next::kHeld;
  if (!answer.responded()) co_await RespondNothing(answer);
  co_return answer.keep_alive() ? Next::kRead : Next::kClose;
}

// A handler that answered nothing: a 500. A coroutine of its own, so that ServeOne's
// frame, which lives as long as the request's turn, holds none of the answer.
Task<void> HttpServer::Impl::RespondNothing(ServerResponse& answer) {
  std::string body = NoResponse();
  co_await answer.Respond(500, std::string(kJson), std::move(body), {});
}

// Reads one request into `req`, or answers what cannot be one (false: close the
// connection). The parser is on the heap and the refusals are answered in a coroutine of
// their own: this frame stays under the 1 KB from which glibc serves a block only after
// merging every small one freed since its last such request (docs/PERFORMANCE.md, round 12).
Task<bool> HttpServer::Impl::ReadRequest(tcp::socket& socket, beast::flat_buffer& buffer, uint64_t id,
                                         const std::string& remote, ServerRequest& req, bool* keep_alive) {
  // The whole request, head and body, comes within the idle timeout; a deadline is
  // started for each wait on the socket (the head's covers the wait for its first byte).
  const SocketDeadline::Clock::time_point by = After(options.idle_timeout_ms);
  SocketDeadline deadline(socket, by);
  SetIdle(id, &socket);
  beast::error_code ec;
  if (buffer.size() == 0) {
    // A kept-alive connection waits for its next request holding no parser and no read
    // buffer: the thousand connections of a burst's clients, idle once their turns were
    // answered, each held them (docs/PERFORMANCE.md, round 27). Bytes of a pipelined
    // request are read at once.
    auto wait = WaitReadable(socket);
    std::tie(ec) = co_await std::move(wait);
  }
  auto parser = std::make_unique<RequestParser>();
  ConfigureRequestParser(*parser, options.max_body_bytes);
  if (!ec && !deadline.passed()) {
    auto read = http::async_read_header(socket, buffer, *parser, kNoThrow);
    std::tie(ec, std::ignore) = co_await std::move(read);
  }
  SetIdle(id, nullptr);
  if (deadline.End()) ec = beast::error::timeout;
  if (ec) co_return co_await RefuseRead(socket, ec, /*body=*/false);
  // The head decides whether the body can be read safely at all, and what path the
  // request names, before a byte of the body is read.
  if (std::optional<ReadRefusal> refused = ScreenHead(parser->get(), req)) {
    co_return co_await Refuse(socket, std::move(refused));
  }
  if (beast::iequals(parser->get()[http::field::expect], std::string_view(kExpectContinue))) {
    const asio::const_buffer interim = asio::buffer(std::string_view(kContinue));
    deadline.Start(socket, by);
    auto write = asio::async_write(socket, interim, kNoThrow);
    auto [wec, wn] = co_await std::move(write);
    if (deadline.End() || wec) co_return false;
  }
  // The body has usually come with the head: read here (the socket never blocks), and
  // only a wait for the rest goes through the io_context.
  beast::error_code bec;
  http::read(socket, buffer, *parser, bec);
  if (bec == asio::error::would_block) {
    deadline.Start(socket, by);
    auto read_body = http::async_read(socket, buffer, *parser, kNoThrow);
    std::tie(bec, std::ignore) = co_await std::move(read_body);
    if (deadline.End()) bec = beast::error::timeout;
  }
  if (bec) co_return co_await RefuseRead(socket, bec, /*body=*/true);
  // The connection's read buffer is freed while the request is handled (a turn waits on
  // its model for seconds); the next request's read allocates it again. Bytes of a
  // pipelined next request stay.
  buffer.shrink_to_fit();
  TakeRequest(*parser, remote, req, keep_alive);
  co_return true;
}

// The canonical path and query of an acceptable head, set on `req`; else the refusal.
std::optional<ReadRefusal> HttpServer::Impl::ScreenHead(const http::request_header<>& head, ServerRequest& req) {
  RequestRefusal why;
  std::optional<RequestTarget> target = ScreenRequestHead(head, &why);
  if (!target) return ReadRefusal{why.status, Refused(why)};
  req.path = std::move(target->path);
  req.query = std::move(target->query);
  return std::nullopt;
}

// Answers a request that could not be read (when there is anything to answer); always
// false: the connection closes after it.
Task<bool> HttpServer::Impl::Refuse(tcp::socket& socket, std::optional<ReadRefusal> refused) {
  if (refused) {
    ConnectionResponse response(socket, false);
    co_await response.Respond(refused->status, std::string(kJson), std::move(refused->body), {});
  }
  co_return false;
}

HttpServer::HttpServer(asio::io_context& io, Options options, RequestHandler handler)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() {
  Stop();
  if (impl_->reserve_fd >= 0) ::close(impl_->reserve_fd);
  impl_->reserve_fd = -1;
}

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
  impl_->reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
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
  for (auto& [id, socket] : impl->idle) {
    asio::post(socket->get_executor(), [impl, id = id] {
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
    auto wait = timer.async_wait(kNoThrow);
    co_await std::move(wait);
  }
}

}  // namespace reins

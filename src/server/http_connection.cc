#include <tuple>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "domain/text.h"
#include "net/wait_readable.h"
#include "server/http_server_impl.h"

namespace reins {
using namespace served;

namespace served {

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

}  // namespace served

namespace {

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

}  // namespace reins

#include "support/mock_upstream.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace reins::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Requests carry whole conversations; a few MB must fit.
constexpr std::uint64_t kBodyLimit = 16u << 20;
constexpr std::uint32_t kHeaderLimit = 64u << 10;
constexpr int kMinEndlessPeriodMs = 10;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool HasHeader(const MockReply& r, const std::string& lower_name) {
  return std::any_of(r.headers.begin(), r.headers.end(),
                     [&](const auto& h) { return Lower(h.first) == lower_name; });
}

RecordedRequest Record(const http::request<http::string_body>& req) {
  RecordedRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  for (const auto& field : req) {
    std::string name = Lower(std::string(field.name_string()));
    std::string value(field.value());
    auto [it, fresh] = out.headers.emplace(name, value);
    if (!fresh) it->second += ", " + value;
  }
  out.body = req.body();
  return out;
}

MockReply NoScriptedReply() {
  return MockUpstream::Json(500, R"({"error":{"message":"mock upstream: no scripted reply","type":"mock"}})");
}

// How one reply is framed on the wire, decided once before anything is written.
struct Framing {
  bool chunked = false;      // we chunk-encode the pieces
  bool add_length = false;   // we add Content-Length (the script did not set one)
  bool add_chunked = false;  // we add Transfer-Encoding: chunked
};

Framing PickFraming(const MockReply& r) {
  Framing f;
  bool has_length = HasHeader(r, "content-length");
  bool has_te = HasHeader(r, "transfer-encoding");
  if (has_te) {
    f.chunked = true;  // the script asked for it by name
  } else if (!has_length) {
    // A cut reply with Content-Length would look complete, so it is chunked too.
    f.chunked = r.chunked || r.chunks.size() > 1 || r.endless || r.cut_after_chunks;
    f.add_chunked = f.chunked;
    f.add_length = !f.chunked;
  }
  return f;
}

std::string HeadBytes(const MockReply& r, const Framing& f, bool keep_alive) {
  auto status = http::int_to_status(static_cast<unsigned>(r.status));
  std::string reason(http::obsolete_reason(status));
  // Clients read the code, not the phrase; 529 (Anthropic "overloaded") has none in Beast.
  if (reason.empty() || status == http::status::unknown) reason = "Unknown";
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason + "\r\n";
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  if (f.add_chunked) out += "Transfer-Encoding: chunked\r\n";
  if (f.add_length) {
    size_t total = 0;
    for (const auto& c : r.chunks) total += c.size();
    out += "Content-Length: " + std::to_string(total) + "\r\n";
  }
  out += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  out += "\r\n";
  return out;
}

std::string ChunkBytes(const std::string& piece, bool chunked) {
  if (!chunked) return piece;
  char size[20];
  std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  return size + piece + "\r\n";
}

const std::string kLastChunk = "0\r\n\r\n";

}  // namespace

// One accepted connection. Its coroutine serves requests until the client closes, the
// script ends the connection, or the server shuts down.
class MockUpstream::Connection {
 public:
  explicit Connection(tcp::socket s) : socket_(std::move(s)) {}

  static asio::awaitable<void> Serve(std::shared_ptr<Connection> self, MockUpstream* up);
  void Close() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  asio::awaitable<bool> ServeOne(MockUpstream* up);
  asio::awaitable<bool> Reply(const MockReply& r, bool keep_alive);
  asio::awaitable<void> Endless(const MockReply& r, bool chunked);
  asio::awaitable<bool> Write(const std::string& bytes);
  asio::awaitable<void> Sleep(int ms);

  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

asio::awaitable<void> MockUpstream::Connection::Serve(std::shared_ptr<Connection> self, MockUpstream* up) {
  bool more = true;
  while (more) more = co_await self->ServeOne(up);
  self->Close();
  up->connections_.erase(self);
}

// Reads one request and answers it; false when the connection must end.
asio::awaitable<bool> MockUpstream::Connection::ServeOne(MockUpstream* up) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  parser.header_limit(kHeaderLimit);
  error_code ec;
  co_await http::async_read(socket_, buffer_, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return false;
  http::request<http::string_body> req = parser.release();
  bool keep_alive = req.keep_alive();
  MockReply reply = up->TakeReply(Record(req));
  if (reply.close_without_reply) co_return false;
  bool ok = co_await Reply(reply, keep_alive);
  co_return ok && keep_alive;
}

// MockReply::stamp_now: the time a chunk is written, in it.
static std::string Stamped(std::string chunk) {
  const std::string now = std::to_string(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
  for (size_t at = chunk.find("{now_us}"); at != std::string::npos; at = chunk.find("{now_us}", at + now.size())) {
    chunk.replace(at, 8, now);
  }
  return chunk;
}

// Writes one scripted reply; false when the connection must end. (Every co_await
// stands alone in its statement and awaits named locals, not temporaries: GCC 12
// mishandles co_await inside ?:, && and || and is fragile with temporaries' lifetimes.)
asio::awaitable<bool> MockUpstream::Connection::Reply(const MockReply& r, bool keep_alive) {
  if (r.first_byte_delay_ms > 0) co_await Sleep(r.first_byte_delay_ms);
  Framing f = PickFraming(r);
  bool ends_connection = r.cut_after_chunks || r.endless;
  std::string head = HeadBytes(r, f, keep_alive && !ends_connection);
  bool ok = co_await Write(head);
  for (size_t i = 0; ok && i < r.chunks.size(); ++i) {
    if (i > 0 && r.chunk_delay_ms > 0) co_await Sleep(r.chunk_delay_ms);
    // An empty chunk would read as the terminating one; there is nothing to send anyway.
    if (r.chunks[i].empty()) continue;
    std::string piece = ChunkBytes(r.stamp_now ? Stamped(r.chunks[i]) : r.chunks[i], f.chunked);
    ok = co_await Write(piece);
  }
  if (!ok || ends_connection) {
    if (ok && r.endless) co_await Endless(r, f.chunked);
    co_return false;  // a cut reply just ends here, without the terminating 0-chunk
  }
  if (f.chunked) ok = co_await Write(kLastChunk);
  co_return ok;
}

// Keeps the stream alive until a write fails (the client went away) or shutdown.
asio::awaitable<void> MockUpstream::Connection::Endless(const MockReply& r, bool chunked) {
  int period = std::max(r.chunk_delay_ms, kMinEndlessPeriodMs);
  std::string bytes = ChunkBytes(r.endless_chunk, chunked);
  bool alive = true;
  while (alive) {
    co_await Sleep(period);
    alive = co_await Write(bytes);
  }
}

asio::awaitable<bool> MockUpstream::Connection::Write(const std::string& bytes) {
  error_code ec;
  co_await asio::async_write(socket_, asio::buffer(bytes), asio::redirect_error(asio::use_awaitable, ec));
  co_return !ec;
}

asio::awaitable<void> MockUpstream::Connection::Sleep(int ms) {
  asio::steady_timer timer(socket_.get_executor());
  timer.expires_after(std::chrono::milliseconds(ms));
  error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

MockUpstream::MockUpstream() : acceptor_(io_) {
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  acceptor_.open(ep.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(ep);
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  StartAccept();
  thread_ = std::thread([this] { io_.run(); });
}

MockUpstream::~MockUpstream() {
  // Closing every socket on the server thread wakes the client side at once; stop()
  // then abandons whatever is still suspended (sleeps, endless streams), and io_'s
  // destructor frees those coroutine frames.
  asio::post(io_, [this] {
    CloseAll();
    io_.stop();
  });
  thread_.join();
  // The sockets must go before io_ does; frames io_ still holds release theirs in its destructor.
  CloseAll();
  connections_.clear();
}

void MockUpstream::CloseAll() {
  error_code ignored;
  acceptor_.close(ignored);
  for (const auto& c : connections_) c->Close();
}

void MockUpstream::StartAccept() {
  acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
    if (ec) return;  // closed: the server is shutting down
    {
      std::lock_guard lock(mu_);
      ++accepted_;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // each chunk leaves when written
    auto conn = std::make_shared<Connection>(std::move(socket));
    connections_.insert(conn);
    asio::co_spawn(io_, Connection::Serve(conn, this), [](std::exception_ptr) {});
    StartAccept();
  });
}

MockReply MockUpstream::TakeReply(RecordedRequest request) {
  std::lock_guard lock(mu_);
  if (responder_) return responder_(request);
  requests_.push_back(std::move(request));
  if (queue_.empty()) return NoScriptedReply();
  MockReply r = std::move(queue_.front());
  queue_.pop_front();
  return r;
}

int MockUpstream::port() const { return port_; }

std::string MockUpstream::base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void MockUpstream::Enqueue(MockReply reply) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(reply));
}

std::vector<RecordedRequest> MockUpstream::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

int MockUpstream::connections_accepted() const {
  std::lock_guard lock(mu_);
  return accepted_;
}

MockReply MockUpstream::Json(int status, std::string body,
                             std::vector<std::pair<std::string, std::string>> extra_headers) {
  MockReply r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  for (auto& h : extra_headers) r.headers.push_back(std::move(h));
  r.chunks.push_back(std::move(body));
  return r;
}

MockReply MockUpstream::Sse(std::vector<std::string> events) {
  MockReply r;
  r.headers.emplace_back("Content-Type", "text/event-stream");
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.chunks = std::move(events);
  r.chunked = true;
  return r;
}

}  // namespace reins::testing

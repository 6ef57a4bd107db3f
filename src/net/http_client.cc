#include "net/http_client.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/ssl.h>

#include "domain/await_into.h"
#include "domain/text.h"
#include "net/no_throw.h"
#include "net/socket_deadline.h"
#include "net/url.h"
#include "net/wait_readable.h"
#include "net/write_now.h"

namespace reins {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// The endpoint of a URL whose host is an address ("127.0.0.1", "::1"), none for a name.
// Such a host needs no resolver: asio's runs getaddrinfo on a thread of its own, a
// hand-off there and back for every new connection (docs/PERFORMANCE.md, round 8).
std::optional<tcp::endpoint> LiteralEndpoint(const Url& url) {
  boost::system::error_code bad;
  const asio::ip::address address = asio::ip::make_address(url.host, bad);
  uint16_t port = 0;
  const char* end = url.port.data() + url.port.size();
  auto [stop, ec] = std::from_chars(url.port.data(), end, port);
  if (bad || ec != std::errc() || stop != end) return std::nullopt;
  return tcp::endpoint(address, port);
}

// One open connection, plain or TLS.
struct Connection {
  std::optional<tcp::socket> plain;
  std::unique_ptr<beast::ssl_stream<tcp::socket>> tls;
  beast::flat_buffer buffer;
  // How many bytes the largest response on this connection took (up to 16 KB), so that
  // the next one is read in one call: left alone, the buffer stays at Beast's first read
  // of 512 bytes, and a model's answer of 700 took two reads, each with its own timer
  // (round 7). The largest, not the last: the buffer is freed between responses, and a
  // tool call and the answer after it differ in length.
  size_t read_hint = 0;
  Clock::time_point keep_until;  // while pooled: reused only before this
  // From a request's last byte to its answer's head. Declared last: it ends before the
  // socket closes, also when an exchange is abandoned with its connection.
  SocketDeadline first_byte;

  tcp::socket& socket() { return tls ? tls->next_layer() : *plain; }
};

// The deadline arithmetic of one exchange: each phase waits for its own timeout or
// what is left of the total, whichever is shorter.
class Deadlines {
 public:
  explicit Deadlines(const HttpTimeouts& t) : t_(t), end_(Clock::now() + std::chrono::milliseconds(t.total_ms)) {}
  // The deadline of a phase.
  Clock::time_point Begin(int phase_ms, const char* phase) {
    auto phase_end = Clock::now() + std::chrono::milliseconds(phase_ms);
    total_is_shorter_ = end_ < phase_end;
    phase_ = phase;
    phase_ms_ = phase_ms;
    return std::min(phase_end, end_);
  }
  std::string Describe() const {
    if (total_is_shorter_) return "total timeout of " + std::to_string(t_.total_ms) + " ms";
    return std::string(phase_) + " timeout of " + std::to_string(phase_ms_) + " ms";
  }
  const HttpTimeouts& timeouts() const { return t_; }

 private:
  HttpTimeouts t_;
  Clock::time_point end_;
  bool total_is_shorter_ = false;
  const char* phase_ = "";
  int phase_ms_ = 0;
};

http::verb Verb(const std::string& method) {
  http::verb v = http::string_to_verb(method);
  return v == http::verb::unknown ? http::verb::post : v;
}

// A request as it goes on the wire: the head formatted once and the body taken from the
// caller, written together in one call. Formatted here rather than by Beast's
// serializer, whose buffer sequences cost about 17 k instructions per message
// (docs/PERFORMANCE.md, round 7).
struct WireRequest {
  std::string head;
  std::string body;

  std::array<asio::const_buffer, 2> Buffers() const { return {asio::buffer(head), asio::buffer(body)}; }
  // Gives their memory back: an empty string assigned would leave it allocated.
  void Free() {
    std::string().swap(head);
    std::string().swap(body);
  }
};

// What an exchange sends, and to whom: built before it starts (HttpClient::Send, not a
// coroutine) and kept on the heap, so that the frame of an exchange waiting on its
// response holds a pointer (GCC keeps every local and temporary of a coroutine, those of
// this preparation included, in its frame for the coroutine's whole life).
struct Outgoing {
  std::shared_ptr<const Url> url;  // HttpClient::Impl::Parsed
  http::verb verb = http::verb::post;
  // What a retry on a fresh connection sends again. Where `again` can build it again (a
  // model provider's request), the head and the body are freed once written, so that a
  // turn waiting on its model holds neither (docs/PERFORMANCE.md, round 23); a retry
  // whose request comes back a different length is given up.
  WireRequest wire;
  std::function<HttpRequest()> again;
  size_t head_bytes = 0;
  size_t body_bytes = 0;
  // A streamed exchange's callbacks (HttpClient::Stream); none for HttpClient::Send.
  struct Streamed {
    BodyChunkFn on_chunk;
    HeadersFn on_headers;
  };
  std::unique_ptr<Streamed> streamed;
};

// "POST http://host:port/path", for errors: built when one is, not kept by every
// exchange while it waits.
std::string What(const Outgoing& out) {
  return std::string(http::to_string(out.verb)) + " " + out.url->Origin() + out.url->target;
}

// The pool's key: origin and io_context (a connection belongs to the one it was opened on).
std::string PoolKey(const Url& url, const asio::execution_context& context) {
  return url.Origin() + "@" + std::to_string(reinterpret_cast<uintptr_t>(&context));
}

// The header fields a request sends: Host and User-Agent, then the caller's, each
// replacing a field of the same name as Beast's `set` did; Content-Type when there is
// a body and the caller gave none; the length as Beast's prepare_payload set it.
Result<WireRequest> BuildRequest(HttpRequest& r, const Url& url) {
  const bool default_port = url.port == (url.tls() ? "443" : "80");
  std::vector<HttpHeaderField> fields = {{"Host", default_port ? url.host : url.host + ":" + url.port},
                                         {"User-Agent", "reins/0.1"}};
  for (HttpHeaderField& h : r.headers) {
    if (h.name.find_first_of("\r\n:") != std::string::npos || h.value.find_first_of("\r\n") != std::string::npos) {
      return InvalidArgument("request header '" + h.name + "' has a line break in it (or a colon in its name)");
    }
    // The framing is the client's to set.
    if (EqualsNoCase(h.name, "content-length") || EqualsNoCase(h.name, "transfer-encoding")) continue;
    auto same = std::find_if(fields.begin(), fields.end(),
                             [&](const HttpHeaderField& f) { return EqualsNoCase(f.name, h.name); });
    if (same != fields.end()) {
      same->value = h.value;
    } else {
      fields.push_back(h);
    }
  }
  const bool has_type = std::any_of(fields.begin(), fields.end(),
                                    [](const HttpHeaderField& f) { return EqualsNoCase(f.name, "content-type"); });
  if (!r.body.empty() && !has_type) fields.push_back({"Content-Type", "application/json"});
  const http::verb verb = Verb(r.method);
  if (!r.body.empty() || verb == http::verb::post || verb == http::verb::put || verb == http::verb::options) {
    fields.push_back({"Content-Length", std::to_string(r.body.size())});
  }
  // Its exact size: where the caller cannot build the request again, the head is kept as
  // long as the answer is awaited (a retry sends it again).
  const std::string_view method = http::to_string(verb);
  size_t head_bytes = method.size() + 1 + url.target.size() + sizeof(" HTTP/1.1\r\n") - 1 + 2;
  for (const HttpHeaderField& f : fields) head_bytes += f.name.size() + 2 + f.value.size() + 2;
  WireRequest wire;
  wire.head.reserve(head_bytes);
  wire.head += method;
  wire.head += ' ';
  wire.head += url.target;
  wire.head += " HTTP/1.1\r\n";
  for (const HttpHeaderField& f : fields) {
    wire.head += f.name;
    wire.head += ": ";
    wire.head += f.value;
    wire.head += "\r\n";
  }
  wire.head += "\r\n";
  wire.body = std::move(r.body);
  return wire;
}

// How long a connection may wait in the pool after this response: `fallback_ms`, or
// less when the server announced when it closes idle ones (`Keep-Alive: timeout=N`,
// seconds), a second before that so that a request never races the server's close.
int KeepAliveMs(std::string_view keep_alive, int fallback_ms) {
  const size_t at = keep_alive.find("timeout=");
  if (at == std::string_view::npos) return fallback_ms;
  const std::string_view digits = keep_alive.substr(at + 8);
  int seconds = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
  if (ec != std::errc() || seconds < 0) return fallback_ms;
  return std::min(fallback_ms, (std::min(seconds, 1 << 20) - 1) * 1000);
}

}  // namespace

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  Options options;
  ssl::context tls_context{ssl::context::tls_client};
  std::once_flag system_cas_loaded;
  std::mutex mu;
  // Per pool key, oldest first: connections come back at the end and are taken from it.
  std::map<std::string, std::deque<std::unique_ptr<Connection>>> idle;
  int opened = 0;
  // URLs as parsed, shared by the exchanges that go to them: a model provider sends every
  // request to one URL, and each exchange waiting on its answer kept a parse of its own
  // (four strings and the path's heap block, 160 bytes). Bounded by forgetting all at
  // kMaxParsedUrls. Under mu.
  static constexpr size_t kMaxParsedUrls = 64;
  std::unordered_map<std::string, std::shared_ptr<const Url>> parsed_urls;

  explicit Impl(Options o) : options(std::move(o)) {
    if (!options.ca_file.empty()) tls_context.load_verify_file(options.ca_file);
    tls_context.set_verify_mode(ssl::verify_peer);
  }

  // The system's CA store is read on the first TLS connection: parsing it takes about
  // 50 ms, which every process that made a client paid at start (reins serve took
  // 105 ms to listen, 52 without it), also with a model on plain HTTP. Should it fail,
  // the handshake does, saying the certificate could not be verified.
  ssl::context& Tls() {
    std::call_once(system_cas_loaded, [this] {
      boost::system::error_code failed;
      tls_context.set_default_verify_paths(failed);
    });
    return tls_context;
  }

  Result<std::shared_ptr<const Url>> Parsed(const std::string& text) {
    std::lock_guard lock(mu);
    if (auto known = parsed_urls.find(text); known != parsed_urls.end()) return known->second;
    REINS_ASSIGN_OR_RETURN(Url url, ParseUrl(text));
    if (parsed_urls.size() >= kMaxParsedUrls) parsed_urls.clear();
    auto parsed = std::make_shared<const Url>(std::move(url));
    parsed_urls.emplace(text, parsed);
    return parsed;
  }

  // The most recently returned connection, unless its time is up (then so is every
  // older one's, and they are all closed).
  std::unique_ptr<Connection> TakeIdle(const std::string& key) {
    // Closed after the lock is released. A vector: an empty deque allocates, and this
    // runs on every exchange.
    std::vector<std::unique_ptr<Connection>> expired;
    std::lock_guard lock(mu);
    auto it = idle.find(key);
    if (it == idle.end() || it->second.empty()) return nullptr;
    if (it->second.back()->keep_until <= Clock::now()) {
      std::move(it->second.begin(), it->second.end(), std::back_inserter(expired));
      it->second.clear();
      return nullptr;
    }
    auto c = std::move(it->second.back());
    it->second.pop_back();
    return c;
  }

  void GiveBack(asio::execution_context* context, const std::string& key, std::unique_ptr<Connection> c,
                const HttpResponse& response);

  // Pooled sockets must not outlive their io_context: drop them when it shuts down.
  void DropContext(asio::execution_context* context) {
    std::vector<std::unique_ptr<Connection>> doomed;
    std::lock_guard lock(mu);
    watched.erase(context);
    std::string suffix = "@" + std::to_string(reinterpret_cast<uintptr_t>(context));
    for (auto it = idle.begin(); it != idle.end();) {
      if (it->first.ends_with(suffix)) {
        for (auto& c : it->second) doomed.push_back(std::move(c));
        it = idle.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::set<asio::execution_context*> watched;

  Task<Result<std::unique_ptr<Connection>>> Open(const Url& url, Deadlines& deadlines);
  // Open's connection put into `c`, or why there is none into `failed` (false): the
  // exchange's frame, which waits on the model, keeps no result of Open's.
  Task<bool> OpenInto(const Url& url, Deadlines& deadlines, std::unique_ptr<Connection>& c,
                      Result<HttpResponse>& failed);
  // `self` keeps the pool alive while the exchange runs. The answer goes to `response`,
  // the caller's: returned, it would have a place in this frame, which waits on the
  // server (a model thinks for seconds), besides the one in the caller's.
  Task<void> Exchange(std::shared_ptr<Impl> self, std::unique_ptr<Outgoing> out, HttpTimeouts timeouts,
                      Result<HttpResponse>& response);
  // An exchange whose response is returned, for callers that await it (Send, Stream).
  Task<Result<HttpResponse>> Returned(std::shared_ptr<Impl> self, std::unique_ptr<Outgoing> out, HttpTimeouts timeouts);
  // The request sent; false, why not put into `failed`, when it could not be.
  Task<bool> SendOn(Connection& c, Outgoing& out, Deadlines& deadlines, Result<HttpResponse>& failed);
  // `got_bytes`: the answer's head came (the server had the request). `reusable`: the
  // connection may serve another request.
  Task<Result<HttpResponse>> ReadOn(Connection& c, Outgoing& out, Deadlines& deadlines, bool* got_bytes,
                                    bool* reusable);
  // ReadOn's answer put into `into` (AwaitInto), so that the exchange's frame, which
  // waits on the model, keeps no result of its own. Not a coroutine: ReadOn's task would
  // be one more temporary of the exchange's frame.
  Task<void> ReadInto(Connection& c, Outgoing& out, Deadlines& deadlines, bool* got_bytes, bool* reusable,
                      Result<HttpResponse>& into) {
    return AwaitInto(ReadOn(c, out, deadlines, got_bytes, reusable), into);
  }
  template <typename AsyncStream>
  Task<bool> SendRequest(AsyncStream& stream, Connection& c, Outgoing& out, Deadlines& deadlines,
                         Result<HttpResponse>& failed);
  template <typename AsyncStream>
  Task<Result<HttpResponse>> ReadResponse(AsyncStream& stream, Connection& c, Outgoing& out, Deadlines& deadlines,
                                          bool* got_bytes, bool* reusable);
};

namespace {

// An io_context service that tells every client with pooled connections on that
// context to drop them when the context shuts down (before its socket service does).
class PoolWatch final : public asio::execution_context::service {
 public:
  static asio::execution_context::id id;
  explicit PoolWatch(asio::execution_context& context) : service(context) {}
  void Add(std::function<void()> on_shutdown) {
    std::lock_guard lock(mu_);
    callbacks_.push_back(std::move(on_shutdown));
  }

 private:
  void shutdown() override {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard lock(mu_);
      callbacks.swap(callbacks_);
    }
    for (auto& f : callbacks) f();
  }
  std::mutex mu_;
  std::vector<std::function<void()>> callbacks_;
};
asio::execution_context::id PoolWatch::id;

}  // namespace

void HttpClient::Impl::GiveBack(asio::execution_context* context, const std::string& key,
                                std::unique_ptr<Connection> c, const HttpResponse& response) {
  const auto now = Clock::now();
  const int keep_ms = KeepAliveMs(response.Header("keep-alive"), options.idle_keep_ms);
  if (keep_ms <= 0 || options.max_idle_per_origin == 0) return;  // closed now, not pooled
  c->keep_until = now + std::chrono::milliseconds(keep_ms);
  // An idle connection keeps no read buffer: the next exchange frees it before it waits
  // anyway (Exchange), and a thousand connections pooled at once kept about 600 bytes of
  // their last answer each (docs/PERFORMANCE.md, round 27).
  if (c->buffer.size() == 0) c->buffer.shrink_to_fit();
  std::vector<std::unique_ptr<Connection>> expired;  // closed after the lock is released
  bool watch = false;
  {
    std::lock_guard lock(mu);
    auto& list = idle[key];
    while (!list.empty() && (list.front()->keep_until <= now || list.size() >= options.max_idle_per_origin)) {
      expired.push_back(std::move(list.front()));
      list.pop_front();
    }
    list.push_back(std::move(c));
    watch = watched.insert(context).second;
  }
  if (watch) {
    std::weak_ptr<Impl> self = shared_from_this();
    asio::use_service<PoolWatch>(*context).Add([self, context] {
      if (auto impl = self.lock()) impl->DropContext(context);
    });
  }
}

namespace {

// `socket` opened afresh for `to` (what it had open closed) and `deadline` started on it,
// in that order: a deadline shuts down the socket it was started on.
boost::system::error_code OpenFor(tcp::socket& socket, const tcp::endpoint& to, SocketDeadline& deadline,
                                  Clock::time_point by) {
  deadline.End();
  boost::system::error_code ec;
  if (socket.is_open()) socket.close(ec);
  socket.open(to.protocol(), ec);
  if (!ec) deadline.Start(socket, by);
  return ec;
}

}  // namespace

Task<Result<std::unique_ptr<Connection>>> HttpClient::Impl::Open(const Url& url, Deadlines& deadlines) {
  auto executor = co_await asio::this_coro::executor;
  auto c = std::make_unique<Connection>();
  if (url.tls()) {
    c->tls = std::make_unique<beast::ssl_stream<tcp::socket>>(executor, Tls());
  } else {
    c->plain.emplace(executor);
  }
  // Under the connect timeout: the connection, then a TLS handshake. Declared after `c`,
  // so that it ends before the socket goes.
  SocketDeadline deadline;
  boost::system::error_code cec;
  if (std::optional<tcp::endpoint> literal = LiteralEndpoint(url)) {
    const Clock::time_point by = deadlines.Begin(deadlines.timeouts().connect_ms, "connect");
    cec = OpenFor(c->socket(), *literal, deadline, by);
    if (!cec) {
      auto connect = c->socket().async_connect(*literal, kNoThrow);
      std::tie(cec) = co_await std::move(connect);
    }
  } else {
    tcp::resolver resolver(executor);
    auto resolve = resolver.async_resolve(url.host, url.port, kNoThrow);
    auto [rec, endpoints] = co_await std::move(resolve);
    if (rec) co_return Unavailable("cannot resolve " + url.Origin() + ": " + rec.message());
    const Clock::time_point by = deadlines.Begin(deadlines.timeouts().connect_ms, "connect");
    // Each address in turn, as asio::async_connect would try them, each on a socket of
    // its own opened before the deadline starts on it.
    cec = asio::error::host_not_found;
    for (const auto& entry : endpoints) {
      cec = OpenFor(c->socket(), entry.endpoint(), deadline, by);
      if (!cec) {
        auto connect = c->socket().async_connect(entry.endpoint(), kNoThrow);
        std::tie(cec) = co_await std::move(connect);
      }
      if (!cec || deadline.passed()) break;
    }
  }
  if (deadline.passed()) co_return DeadlineExceeded("connect to " + url.Origin() + ": " + deadlines.Describe());
  if (cec) co_return Unavailable("connect to " + url.Origin() + ": " + cec.message());
  // A read that would wait returns at once instead (ReadResponse reads what has come).
  if (c->plain) c->plain->non_blocking(true, cec);
  if (cec) co_return Unavailable("connect to " + url.Origin() + ": " + cec.message());
  if (c->tls) {
    // SNI, and verification that the certificate names this host.
    if (!SSL_set_tlsext_host_name(c->tls->native_handle(), url.host.c_str())) {
      co_return Unavailable("TLS to " + url.Origin() + ": cannot set server name");
    }
    c->tls->set_verify_callback(ssl::host_name_verification(url.host));
    // Awaited through use_awaitable: Beast's TLS stream of Boost 1.81 takes no deferred token.
    auto [hec] = co_await c->tls->async_handshake(ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
    if (deadline.passed()) co_return DeadlineExceeded("TLS handshake with " + url.Origin() + ": " + deadlines.Describe());
    if (hec) co_return Unavailable("TLS handshake with " + url.Origin() + ": " + hec.message());
  }
  deadline.End();  // (and on every return above, as `deadline` goes)
  {
    std::lock_guard lock(mu);
    ++opened;
  }
  co_return std::move(c);
}

namespace {

// Ends the first-byte deadline: how the wait for the answer (or its head) went. Not in
// a coroutine: the messages' temporaries would be in its frame.
Status EndFirstByteWait(SocketDeadline& first_byte, boost::system::error_code waited, const Outgoing& out,
                        const Deadlines& deadlines) {
  if (first_byte.End()) return DeadlineExceeded(What(out) + ": no response within the " + deadlines.Describe());
  if (waited) return Unavailable(What(out) + ": the connection closed before a response: " + waited.message());
  return OkStatus();
}

// What the socket did not take at once (WriteNow; all of it on a TLS connection),
// under the send timeout. A coroutine of its own: its buffers are not kept in the frame
// of the exchange, which waits on the model.
template <typename AsyncStream>
Task<Status> WriteRest(AsyncStream& stream, tcp::socket& socket, const Outgoing& out, Deadlines& deadlines,
                       size_t sent) {
  SocketDeadline deadline(socket, deadlines.Begin(deadlines.timeouts().idle_ms, "send"));
  beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(out.wire.Buffers());
  rest.consume(sent);
  auto write = asio::async_write(stream, rest, kNoThrow);
  auto [ec, written] = co_await std::move(write);
  if (deadline.End()) co_return DeadlineExceeded(What(out) + ": " + deadlines.Describe());
  if (ec) co_return Unavailable(What(out) + ": sending the request failed: " + ec.message());
  co_return OkStatus();
}

}  // namespace

// Sends the request, frees what `again` can build again, and starts the first-byte
// deadline. The wait for the answer's first bytes is the exchange's own (Exchange).
template <typename AsyncStream>
Task<bool> HttpClient::Impl::SendRequest(AsyncStream& stream, Connection& c, Outgoing& out, Deadlines& deadlines,
                                         Result<HttpResponse>& failed) {
  // A plain connection's socket never blocks: the request usually goes whole here.
  size_t sent = 0;
  if constexpr (std::is_same_v<AsyncStream, tcp::socket>) sent = WriteNow(stream, out.wire.Buffers());
  if (sent < out.wire.head.size() + out.wire.body.size()) {
    Status rest = co_await WriteRest(stream, c.socket(), out, deadlines, sent);
    if (!rest.ok()) {
      failed = std::move(rest);
      co_return false;
    }
  }
  if (out.again) out.wire.Free();
  c.first_byte.Start(c.socket(), deadlines.Begin(deadlines.timeouts().first_byte_ms, "first byte"));
  co_return true;
}

// Reads the answer whose first bytes have come (Exchange waited for them): its head under
// the first-byte deadline SendRequest started, then the body under the idle one between
// reads.
template <typename AsyncStream>
Task<Result<HttpResponse>> HttpClient::Impl::ReadResponse(AsyncStream& stream, Connection& c, Outgoing& out,
                                                          Deadlines& deadlines, bool* got_bytes, bool* reusable) {
  const HttpTimeouts& t = deadlines.timeouts();
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(options.max_response_bytes);
  c.buffer.reserve(c.buffer.size() + c.read_hint);
  // The head has come (Exchange waited for it) and is usually whole: on a plain
  // connection, whose socket never blocks, it is read and parsed here, without an
  // asynchronous read whose completion is one more pass through the io_context.
  boost::system::error_code hec = asio::error::would_block;
  size_t hn = 0;
  if constexpr (std::is_same_v<AsyncStream, tcp::socket>) hn = http::read_header(stream, c.buffer, parser, hec);
  if (hec == asio::error::would_block) {
    auto read = http::async_read_header(stream, c.buffer, parser, kNoThrow);
    auto [rest_ec, rest_n] = co_await std::move(read);
    hec = rest_ec;
    hn += rest_n;
  }
  if (Status head = EndFirstByteWait(c.first_byte, hec, out, deadlines); !head.ok()) co_return head;
  *got_bytes = true;

  HttpResponse response;
  response.status = static_cast<int>(parser.get().result_int());
  size_t head_bytes = 0;
  for (const auto& field : parser.get()) head_bytes += field.name_string().size() + field.value().size() + 4;
  response.headers.reserve(head_bytes);
  for (const auto& field : parser.get()) response.AddHeader(field.name_string(), field.value());
  const bool streaming = out.streamed && response.status >= 200 && response.status < 300;
  if (streaming && out.streamed->on_headers) out.streamed->on_headers(response);
  // The body arrives through a chunk buffer sized to it when its length is known (a model's
  // answer is usually under 1 KB), left uninitialised: zeroing and freeing 16 KB per
  // response (which also made malloc consolidate its free lists) showed in the profile.
  constexpr size_t kChunkBytes = 16 * 1024;
  const auto length = parser.content_length();  // boost::optional
  const size_t chunk_bytes = length && *length > 0 && *length < kChunkBytes ? static_cast<size_t>(*length) : kChunkBytes;
  auto buf = std::make_unique_for_overwrite<char[]>(chunk_bytes);
  if (length && !streaming) response.body.reserve(static_cast<size_t>(std::min<uint64_t>(*length, 64 * 1024)));
  size_t consumed = hn;
  while (!parser.is_done()) {
    parser.get().body().data = buf.get();
    parser.get().body().size = chunk_bytes;
    // As the head: what has come is read here, and only a wait goes through the io_context.
    boost::system::error_code rec = asio::error::would_block;
    size_t rn = 0;
    if constexpr (std::is_same_v<AsyncStream, tcp::socket>) rn = http::read_some(stream, c.buffer, parser, rec);
    if (rec == asio::error::would_block) {
      SocketDeadline idle(c.socket(), deadlines.Begin(t.idle_ms, "idle"));
      auto read = http::async_read_some(stream, c.buffer, parser, kNoThrow);
      auto [aec, an] = co_await std::move(read);
      rec = idle.End() ? beast::error::timeout : aec;
      rn += an;
    }
    consumed += rn;
    if (rec == http::error::need_buffer) rec = {};
    size_t got = chunk_bytes - parser.get().body().size;
    if (got > 0) {
      std::string_view piece(buf.get(), got);
      if (streaming) {
        if (Status s = out.streamed->on_chunk(piece); !s.ok()) co_return s;
      } else {
        response.body.append(piece);
      }
    }
    if (rec == http::error::body_limit) {
      co_return ResourceExhausted(What(out) + ": the response is larger than " + std::to_string(options.max_response_bytes) + " bytes");
    }
    if (rec == beast::error::timeout) co_return DeadlineExceeded(What(out) + ": the response stalled: " + deadlines.Describe());
    if (rec) co_return Aborted(What(out) + ": the connection failed mid-response: " + rec.message());
  }
  *reusable = parser.keep_alive();
  c.read_hint = std::max(c.read_hint, std::min(consumed, kChunkBytes));
  co_return response;
}

namespace {

Result<std::unique_ptr<Outgoing>> Prepare(HttpRequest& request, Result<std::shared_ptr<const Url>> url,
                                          size_t max_request_bytes) {
  auto out = std::make_unique<Outgoing>();
  REINS_ASSIGN_OR_RETURN(out->url, std::move(url));
  out->verb = Verb(request.method);
  if (request.body.size() > max_request_bytes) {
    return ResourceExhausted(request.method + " " + request.url + ": the request body (" +
                             std::to_string(request.body.size()) + " bytes) is larger than the cap of " +
                             std::to_string(max_request_bytes));
  }
  REINS_ASSIGN_OR_RETURN(out->wire, BuildRequest(request, *out->url));
  out->again = std::move(request.again);
  out->head_bytes = out->wire.head.size();
  out->body_bytes = out->wire.body.size();
  return out;
}

Task<Result<HttpResponse>> Refused(Status why) { co_return why; }

Task<void> Refused(Status why, Result<HttpResponse>& response) {
  response = std::move(why);
  co_return;
}

// The request again for a retry, when it was freed once written; false when it cannot be
// had byte for byte (the retry is then given up).
bool WholeAgain(Outgoing& out) {
  if (out.wire.head.size() == out.head_bytes && out.wire.body.size() == out.body_bytes) return true;
  HttpRequest request = out.again();
  Result<WireRequest> wire = BuildRequest(request, *out.url);
  if (!wire.ok() || wire->head.size() != out.head_bytes || wire->body.size() != out.body_bytes) return false;
  out.wire = std::move(*wire);
  return true;
}

}  // namespace

// Plain functions that pick the stream to await (a coroutine of each for a plain and a
// TLS connection), so that the exchange's frame holds one result of each, not two.
Task<bool> HttpClient::Impl::SendOn(Connection& c, Outgoing& out, Deadlines& deadlines, Result<HttpResponse>& failed) {
  if (c.tls) return SendRequest(*c.tls, c, out, deadlines, failed);
  return SendRequest(*c.plain, c, out, deadlines, failed);
}

Task<Result<HttpResponse>> HttpClient::Impl::ReadOn(Connection& c, Outgoing& out, Deadlines& deadlines,
                                                    bool* got_bytes, bool* reusable) {
  if (c.tls) return ReadResponse(*c.tls, c, out, deadlines, got_bytes, reusable);
  return ReadResponse(*c.plain, c, out, deadlines, got_bytes, reusable);
}

Task<bool> HttpClient::Impl::OpenInto(const Url& url, Deadlines& deadlines, std::unique_ptr<Connection>& c,
                                      Result<HttpResponse>& failed) {
  Result<std::unique_ptr<Connection>> opened = co_await Open(url, deadlines);
  if (!opened.ok()) {
    failed = opened.status();
    co_return false;
  }
  c = std::move(*opened);
  co_return true;
}

namespace {

// The execution context the awaiting coroutine runs on. A coroutine of its own: the
// executor it is read from (56 bytes) would be a temporary of the exchange's frame.
Task<asio::execution_context*> RunningContext() {
  co_return &asio::query(co_await asio::this_coro::executor, asio::execution::context);
}

// How the wait for the answer's first byte ended: false, why put into `response`, when
// it failed. Not in a coroutine: the status would be in its frame.
bool FirstByteCame(SocketDeadline& first_byte, boost::system::error_code waited, const Outgoing& out,
                   const Deadlines& deadlines, Result<HttpResponse>& response) {
  Status head = EndFirstByteWait(first_byte, waited, out, deadlines);
  if (head.ok()) return true;
  response = std::move(head);
  return false;
}

}  // namespace

Task<void> HttpClient::Impl::Exchange(std::shared_ptr<Impl> /*self*/, std::unique_ptr<Outgoing> out,
                                      HttpTimeouts timeouts, Result<HttpResponse>& response) {
  // Connections belong to the io_context they were opened on.
  asio::execution_context& context = *co_await RunningContext();
  Deadlines deadlines(timeouts);

  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> c = attempt == 0 ? TakeIdle(PoolKey(*out->url, context)) : nullptr;
    bool pooled = c != nullptr;
    if (!c) {
      if (!co_await OpenInto(*out->url, deadlines, c, response)) co_return;
    }
    bool got_bytes = false, reusable = false;
    bool sent = co_await SendOn(*c, *out, deadlines, response);
    if (sent && c->buffer.size() == 0) {
      // While the server thinks (a model takes seconds), nothing is allocated for reading
      // its answer: a thousand turns waiting on one each held a response parser, Beast's
      // read operation, the connection's read buffer and the request's body
      // (docs/PERFORMANCE.md, round 15). The wait is in this frame, which waits anyway:
      // in SendRequest's, its 290 bytes waited too (round 23).
      c->buffer.shrink_to_fit();  // ReadResponse allocates it again, sized by read_hint
      auto wait = WaitReadable(c->socket());
      auto [waited] = co_await std::move(wait);
      if (waited || c->first_byte.passed()) sent = FirstByteCame(c->first_byte, waited, *out, deadlines, response);
    }
    if (sent) co_await ReadInto(*c, *out, deadlines, &got_bytes, &reusable, response);
    c->first_byte.End();  // already, unless the exchange failed first
    // A kept-alive connection the server closed meanwhile fails before any byte:
    // open a fresh one once. The request never reached a handler, so this is safe.
    if (!response.ok() && pooled && !got_bytes && response.status().code() == StatusCode::kUnavailable &&
        WholeAgain(*out)) {
      continue;
    }
    if (response.ok() && reusable) GiveBack(&context, PoolKey(*out->url, context), std::move(c), *response);
    co_return;
  }
}

std::string HttpResponse::Header(std::string_view name) const {
  return std::string(HeaderLineValue(headers, name, Repeated::kFirst));
}

void HttpResponse::AddHeader(std::string_view name, std::string_view value) {
  headers.append(name).append(": ").append(value).append("\r\n");
}

HttpClient::HttpClient() : HttpClient(Options{}) {}
HttpClient::HttpClient(Options options) : impl_(std::make_shared<Impl>(std::move(options))) {}
HttpClient::~HttpClient() = default;

// Not coroutines: a frame of their own would be held by every exchange while it waits,
// and the request is prepared here so that no frame holds it. The response goes to
// the caller's variable, or through a small frame (Returned) to those that await it.
Task<void> HttpClient::Send(HttpRequest request, Result<HttpResponse>& response) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status(), response);
  return impl_->Exchange(impl_, std::move(*out), request.timeouts, response);
}

Task<Result<HttpResponse>> HttpClient::Send(HttpRequest request) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status());
  return impl_->Returned(impl_, std::move(*out), request.timeouts);
}

Task<void> HttpClient::Stream(HttpRequest request, BodyChunkFn on_chunk, HeadersFn on_headers,
                              Result<HttpResponse>& response) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status(), response);
  (*out)->streamed = std::make_unique<Outgoing::Streamed>(Outgoing::Streamed{std::move(on_chunk), std::move(on_headers)});
  return impl_->Exchange(impl_, std::move(*out), request.timeouts, response);
}

Task<Result<HttpResponse>> HttpClient::Stream(HttpRequest request, BodyChunkFn on_chunk, HeadersFn on_headers) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status());
  (*out)->streamed = std::make_unique<Outgoing::Streamed>(Outgoing::Streamed{std::move(on_chunk), std::move(on_headers)});
  return impl_->Returned(impl_, std::move(*out), request.timeouts);
}

Task<Result<HttpResponse>> HttpClient::Impl::Returned(std::shared_ptr<Impl> self, std::unique_ptr<Outgoing> out,
                                                      HttpTimeouts timeouts) {
  Result<HttpResponse> response = HttpResponse{};
  co_await Exchange(std::move(self), std::move(out), timeouts, response);
  co_return response;
}

int HttpClient::connections_opened() const {
  std::lock_guard lock(impl_->mu);
  return impl_->opened;
}

}  // namespace reins

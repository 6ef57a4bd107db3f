#include <charconv>
#include <iterator>
#include <tuple>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <openssl/ssl.h>

#include "net/http_client_impl.h"
#include "net/no_throw.h"

namespace reins {
using namespace outbound;
namespace {

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

}  // namespace reins

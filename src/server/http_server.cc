#include "server/http_server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "net/io_threads.h"
#include "server/http_server_impl.h"

namespace reins {
using namespace served;

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

// HttpServer::Impl, shared by the server's files:
//   http_server.cc        listening: the accept loop, the connection limit, start and stop
//   http_connection.cc    one connection: its requests read, handled and answered, held responses
//   connection_response.* what is written to a connection
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http.hpp>

#include "net/io_threads.h"
#include "server/connection_response.h"

namespace reins {
namespace served {

namespace http = beast::http;

// A request that cannot be read whole: why, as the status and the body of the answer.
struct ReadRefusal {
  int status = 400;
  std::string body;
};

// What a read that failed gets: nothing when the client went away or stayed silent (the
// connection just closes), else a refusal to answer first. `body`: the body's read (a
// head over the limit is known before it).
std::optional<ReadRefusal> RefusalOfRead(const beast::error_code& ec, size_t max_body_bytes, bool body);

}  // namespace served

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  using ReadRefusal = served::ReadRefusal;
  using tcp = served::tcp;

  Impl(boost::asio::io_context& io, Options o, RequestHandler h)
      : io(io), options(std::move(o)), handler(std::move(h)), acceptor(SerialExecutor(io)) {}

  boost::asio::io_context& io;
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
    boost::beast::flat_buffer buffer;
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
  Task<bool> ReadRequest(tcp::socket& socket, boost::beast::flat_buffer& buffer, uint64_t id, const std::string& remote,
                         ServerRequest& req, bool* keep_alive);
  static std::optional<ReadRefusal> ScreenHead(const boost::beast::http::request_header<>& head, ServerRequest& req);
  static Task<bool> Refuse(tcp::socket& socket, std::optional<ReadRefusal> refused);
  // A read that failed, refused as RefusalOfRead says. Not a coroutine: the refusal is
  // built here, not as a temporary of the reading frame, which waits for every request.
  Task<bool> RefuseRead(tcp::socket& socket, const boost::beast::error_code& ec, bool body) const {
    return Refuse(socket, served::RefusalOfRead(ec, options.max_body_bytes, body));
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

}  // namespace reins

// HttpServer: the HTTP/1.1 transport of `reins serve`, on Boost.Beast with C++20
// coroutines. One coroutine per connection (keep-alive), on the event loop the
// connection was given when accepted (Options::loops: the loops in turn), else on the
// server's io_context; a request waiting on a model or a tool holds no thread.
//
// The server reads a request's head, refuses what request_rules.h refuses (a path that
// is not canonical, ambiguous framing, no Host), then reads the body up to
// `max_body_bytes` (else 413), hands the request to the handler, and writes what the
// handler answers: a whole response, a chunked body (StartBody / SendChunk / EndBody),
// or an SSE stream (StartStream / Send) that ends when the handler returns; or it holds
// the response (ServerResponse::Hold) and answers it after it returned, the connection
// waiting meanwhile without a coroutine of its own. Malformed HTTP gets a 400 and the
// connection is closed.
//
// Resources: at most `max_connections` are open at once. When all are open, the
// connection that has waited longest for a request (an idle keep-alive, a head that
// never came) is closed to make room (`on_refused("idle_shed")`), so that a client
// holding idle sockets cannot keep everyone else out, /healthz included; with none
// idle, one more is answered 503 and closed (`on_refused("max_connections")`). When the process runs out of file
// descriptors, the accept loop backs off instead of spinning, and uses a descriptor it
// kept in reserve to answer the waiting client 503 (`on_refused("fd_exhausted")`).
//
// Shutdown: Stop() closes the listener; connections finish the request in hand and
// close; Drain() waits until none is left or the deadline passes.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

#include "reins/async.h"
#include "reins/status.h"

namespace reins {

struct ServerRequest {
  std::string method;
  std::string target;  // path and query, as sent
  std::string path;    // canonical (request_rules.h); what authentication and routing read
  std::string query;   // after '?', undecoded
  // The header fields as they came, one "name: value\r\n" line each with the name in
  // lower case: one string, not a map (a request waits as long as its turn, and a map
  // held a node of about 100 bytes per field).
  std::string headers;
  std::string body;
  std::string remote;  // peer address
  void AddHeader(std::string_view name, std::string_view value);
  // The value of the last field named `lower_name`; "" when there is none.
  std::string Header(std::string_view lower_name) const;
};

// What a handler writes back: Respond() once; or StartBody(), SendChunk()s, EndBody()
// for a large body written as it is produced; or StartStream() then Send()s.
class ServerResponse {
 public:
  virtual ~ServerResponse() = default;
  virtual Task<void> Respond(int status, std::string content_type, std::string body,
                             std::map<std::string, std::string> headers = {}) = 0;
  // A 200 with a chunked body. Each Status is non-OK once the client has gone.
  virtual Task<Status> StartBody(std::string content_type) = 0;
  virtual Task<Status> SendChunk(std::string bytes) = 0;
  virtual Task<Status> EndBody() = 0;
  // Sends the SSE response headers (200, text/event-stream), with `headers` besides.
  virtual Task<Status> StartStream(std::map<std::string, std::string> headers = {}) = 0;
  // One SSE event (`event` "": data only, as OpenAI's streams are); a non-OK Status
  // when the client has gone (the handler may go on).
  virtual Task<Status> Send(std::string_view event, std::string_view data) = 0;
  // A comment line, to keep idle streams (and proxies) alive.
  virtual Task<Status> Heartbeat() = 0;
  virtual int status() const = 0;

  // Lets the handler return before it answers, for an answer that takes long (a turn
  // waiting seconds on its model): the connection then waits as data on the heap (its
  // socket, its read buffer, whether it stays open), not as the frames of the coroutines
  // that read, routed and handled the request. The response returned is answered later,
  // on the connection's executor (the handler's); once its last owner lets go, the
  // connection goes on to its next request (or closes), after a 500 when nothing was
  // answered, as for a handler that returns without answering. `answered` then runs
  // with the status sent. Null when this response cannot be held or was written to
  // already: the handler answers this one as usual.
  virtual std::shared_ptr<ServerResponse> Hold(std::function<void(int status)> answered) {
    (void)answered;
    return nullptr;
  }
  // True once Hold gave the response away: this one is not to be written to.
  virtual bool held() const { return false; }
};

using RequestHandler = std::function<Task<void>(const ServerRequest&, ServerResponse&)>;

class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0 picks a free port
    size_t max_body_bytes = 1u << 20;
    int idle_timeout_ms = 60000;  // a keep-alive connection with no request is closed
    int max_connections = 20000;  // beyond it: 503 and close
    // A connection refused ("max_connections", "fd_exhausted"); any thread.
    std::function<void(std::string_view reason)> on_refused;
    // Where accepted connections run, in turn (EventLoops: one io_context per thread);
    // empty: on the server's own io_context.
    std::vector<boost::asio::io_context*> loops;
  };
  HttpServer(boost::asio::io_context& io, Options options, RequestHandler handler);
  ~HttpServer();

  // Binds and starts accepting. The bound port is port() afterwards.
  Status Start();
  int port() const;
  // Stops accepting; in-flight requests finish.
  void Stop();
  // Completes when every connection has closed, or after `deadline_ms`.
  Task<void> Drain(int deadline_ms);
  int open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace reins

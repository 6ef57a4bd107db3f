// HttpClient: one asynchronous HTTP/1.1 client for everything reins sends over the
// network (model providers, the http tool backend, MCP over Streamable HTTP). Built on
// Boost.Beast + Asio with C++20 coroutines; a request in flight holds no thread.
//
// - TLS through OpenSSL with the system CA store, certificate and host-name
//   verification on, SNI set.
// - Connections are kept alive and reused per origin (scheme, host, port) and per
//   io_context, up to `max_idle_per_origin` idle ones, each for `idle_keep_ms` or what
//   the server's `Keep-Alive: timeout=N` allows, less a second; a reused connection the
//   server closed meanwhile is replaced once, transparently, before any byte of the
//   response was read.
// - Timeouts: connect (resolve + TCP + TLS), first byte (request written → response
//   headers), idle (between body reads), total (the whole exchange).
// - While the server thinks, an exchange holds its connection (its first-byte deadline
//   a node in its io_context's queue, net/socket_deadline.h) and the request's URL: the
//   parser and the read buffer come with the answer's first bytes, and the head and the
//   body are freed once written when the caller can build them again (`again`).
// - Caps: a request body over `max_request_bytes` is refused before anything is sent;
//   a response over `max_response_bytes` is cut and reported.
// - Cancellation: every operation honours Asio per-operation cancellation, so
//   `co_await (client.Send(r) || timer.async_wait(...))` abandons the exchange; the
//   connection is then closed, never reused.
// - No proxy support: HTTPS_PROXY is not read (documented in docs/providers.md).
//
// Errors are Status values whose message names the method and URL:
//   kUnavailable       no response byte was read (refused, reset, TLS failure): safe to retry
//   kDeadlineExceeded  a timeout fired (the message says which)
//   kAborted           the connection failed after part of the response was read
//   kResourceExhausted a size cap was hit
//   kInvalidArgument   the URL or request is malformed
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reins/async.h"
#include "reins/status.h"

namespace reins {

struct HttpHeaderField {
  std::string name;
  std::string value;
};

struct HttpTimeouts {
  int connect_ms = 10000;
  int first_byte_ms = 60000;
  int idle_ms = 60000;
  int total_ms = 120000;
};

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<HttpHeaderField> headers;
  std::string body;  // sent with Content-Type: application/json unless a header says otherwise
  HttpTimeouts timeouts;
  // Builds the request again, byte for byte (its method, header fields and body), for a
  // caller that can (the model providers). The client then frees the head and the body
  // once they are written, instead of keeping them while the server thinks in case a
  // reused connection turns out closed and the request must go out once more on a fresh
  // one (docs/PERFORMANCE.md, rounds 15 and 23). Called at most once, while the exchange
  // runs; its URL and timeouts are not read.
  std::function<HttpRequest()> again;
};

struct HttpResponse {
  int status = 0;
  // The header fields as they came, one "Name: value\r\n" line each: one string per
  // response rather than two per field (a model's answer has about ten fields).
  std::string headers;
  std::string body;  // empty for a streamed 2xx response (the chunks went to the callback)
  // The first header named `name` (case-insensitive); "" when absent.
  std::string Header(std::string_view name) const;
  void AddHeader(std::string_view name, std::string_view value);
};

// Receives the body of a streamed 2xx response as it arrives. A non-OK Status stops
// the exchange and is returned by Stream().
using BodyChunkFn = std::function<Status(std::string_view)>;
// Sees a streamed response's status and headers before its first chunk (to pick the
// body's parser by Content-Type).
using HeadersFn = std::function<void(const HttpResponse&)>;

class HttpClient {
 public:
  struct Options {
    size_t max_request_bytes = 8u << 20;
    size_t max_response_bytes = 32u << 20;
    // As many as the calls that run at once: with 4, 64 turns in flight closed and
    // reopened a connection per model call (a TLS handshake each, on a real provider),
    // and the server spent a third more CPU per turn (docs/PERFORMANCE.md, round 7).
    size_t max_idle_per_origin = 1024;
    int idle_keep_ms = 30000;  // an idle connection older than this is closed, not reused
    std::string ca_file;  // extra CA bundle (tests); the system store is always loaded
  };

  HttpClient();
  explicit HttpClient(Options options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` and reads the whole response.
  Task<Result<HttpResponse>> Send(HttpRequest request);
  // Sends `request`; a 2xx response's body goes to `on_chunk` as it arrives, any other
  // status's body is read whole into the returned response (for the error message).
  Task<Result<HttpResponse>> Stream(HttpRequest request, BodyChunkFn on_chunk, HeadersFn on_headers = {});
  // The same, the response put into `response`: no frame between the caller and the
  // exchange, and no place for the response in the exchange's, which waits as long as
  // the server takes to answer (the forms above add a small frame that returns it).
  // For a caller whose own frame waits anyway: a model call, a tool call.
  Task<void> Send(HttpRequest request, Result<HttpResponse>& response);
  Task<void> Stream(HttpRequest request, BodyChunkFn on_chunk, HeadersFn on_headers, Result<HttpResponse>& response);

  // Connections opened so far (for connection-reuse tests and metrics).
  int connections_opened() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace reins

// McpHttpTransport: MCP's Streamable HTTP transport (revision 2025-11-25). Every message
// reins sends is a POST to the server's endpoint with
// `Accept: application/json, text/event-stream`. The answer to a request is either one
// JSON message or an SSE stream carrying the server's requests and notifications about
// it (progress, elicitation) and finally its response; notifications and responses we
// send are acknowledged with 202. The session id the server hands out with the
// initialize answer (`Mcp-Session-Id`) and the negotiated protocol version
// (`MCP-Protocol-Version`) go on every later message.
//
// A POST that fails (refused, timed out, an HTTP error) is answered locally with a
// JSON-RPC error for its id, so the call waiting for it fails with the reason instead of
// waiting out its timeout. A 404 to a message that carried the session id means the
// server forgot the session (it restarted, or expired it): the message was not
// processed, `on_session_lost` fires, and the client initializes again. A GET stream
// carries what the server says unprompted (list_changed, roots/list). Close() ends the
// session with DELETE and abandons the streams still open.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "net/http_client.h"
#include "reins/async.h"

namespace reins {

class McpHttpTransport {
 public:
  using MessageFn = std::function<void(const std::string& message)>;

  McpHttpTransport(boost::asio::any_io_executor executor, std::string url, std::vector<HttpHeaderField> headers,
                   int timeout_ms);
  ~McpHttpTransport();

  void set_on_message(MessageFn f) { on_message_ = std::move(f); }
  void set_on_session_lost(std::function<void()> f) { on_session_lost_ = std::move(f); }
  void set_log(std::function<void(const std::string&)> f) { log_ = std::move(f); }
  void set_protocol_version(std::string v) { protocol_version_ = std::move(v); }

  // Sends one JSON-RPC message; what comes back goes to on_message.
  void Post(std::string message);
  // Opens the GET stream on which the server sends what is not about one of our calls
  // (list_changed, roots/list); call once the session is initialized.
  void Listen();
  // Waits until every notification and response posted so far was acknowledged (the
  // server must see notifications/initialized before the next request).
  Task<void> Settle();
  // DELETE the session (when there is one) and abandon the open streams. Idempotent.
  Task<void> Close();

  const std::string& session_id() const { return session_id_; }
  int posts() const { return posts_; }

 private:
  struct Exchange;
  Task<Result<HttpResponse>> Deliver(std::shared_ptr<bool> alive, std::shared_ptr<Exchange> exchange,
                                     HttpRequest request);
  Task<void> Run(std::shared_ptr<bool> alive, std::shared_ptr<Exchange> exchange);
  Task<void> ListenOn(std::shared_ptr<bool> alive, std::shared_ptr<Exchange> exchange);
  void FailLocally(const Exchange& exchange, const std::string& why, int code);
  HttpRequest Request(std::string method, std::string body,
                      std::string accept = "application/json, text/event-stream") const;
  void Log(const std::string& line) const;

  boost::asio::any_io_executor executor_;
  std::string url_;
  std::vector<HttpHeaderField> headers_;
  int timeout_ms_;
  HttpClient client_;
  MessageFn on_message_;
  std::function<void()> on_session_lost_;
  std::function<void(const std::string&)> log_;
  std::string session_id_;
  std::string protocol_version_;
  int posts_ = 0;
  uint64_t next_exchange_ = 0;
  std::map<uint64_t, std::shared_ptr<Exchange>> open_;  // in flight, for Settle and Close
  bool closed_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace reins

#include "mcp/http_transport.h"

#include <chrono>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "domain/json_parse.h"
#include "net/sse.h"
#include "reins/json.h"

namespace reins {

namespace asio = boost::asio;

// One POST in flight.
struct McpHttpTransport::Exchange {
  uint64_t key = 0;
  std::string body;
  Json id;                 // the request's id; null for a notification or a response
  std::string method;      // "" for a response
  bool answered = false;   // the response to `id` came back
  bool listener = false;   // the GET stream for the server's own messages
  asio::cancellation_signal cancel;
  std::vector<std::shared_ptr<asio::steady_timer>> settle_waiters;
};

McpHttpTransport::McpHttpTransport(asio::any_io_executor executor, std::string url, std::vector<HttpHeaderField> headers,
                                   int timeout_ms)
    : executor_(std::move(executor)), url_(std::move(url)), headers_(std::move(headers)), timeout_ms_(timeout_ms) {}

McpHttpTransport::~McpHttpTransport() {
  *alive_ = false;
  for (auto& [key, exchange] : open_) exchange->cancel.emit(asio::cancellation_type::terminal);
}

void McpHttpTransport::Log(const std::string& line) const {
  if (log_) log_(line);
}

HttpRequest McpHttpTransport::Request(std::string method, std::string body, std::string accept) const {
  HttpRequest r;
  r.method = std::move(method);
  r.url = url_;
  r.body = std::move(body);
  r.headers = headers_;
  r.headers.push_back({"Accept", std::move(accept)});
  if (!session_id_.empty()) r.headers.push_back({"Mcp-Session-Id", session_id_});
  if (!protocol_version_.empty()) r.headers.push_back({"MCP-Protocol-Version", protocol_version_});
  // A request's own deadline is the JSON-RPC call's; these only bound a stuck socket.
  r.timeouts.first_byte_ms = timeout_ms_;
  r.timeouts.idle_ms = timeout_ms_;
  r.timeouts.total_ms = timeout_ms_ + 10000;
  return r;
}

void McpHttpTransport::Post(std::string message) {
  auto exchange = std::make_shared<Exchange>();
  exchange->key = next_exchange_++;
  Json parsed = ParseJsonOrDiscarded(message);
  if (parsed.is_object()) {
    exchange->method = parsed.value("method", "");
    if (!exchange->method.empty() && parsed.contains("id")) exchange->id = parsed["id"];
  }
  exchange->body = std::move(message);
  ++posts_;
  if (closed_) {
    FailLocally(*exchange, "the MCP session over HTTP was closed", -32000);
    return;
  }
  open_[exchange->key] = exchange;
  asio::co_spawn(executor_, Run(alive_, exchange), asio::bind_cancellation_slot(exchange->cancel.slot(), asio::detached));
}

// Answers a request we could not deliver with a local JSON-RPC error, so its caller
// fails now with the reason rather than at its timeout.
void McpHttpTransport::FailLocally(const Exchange& exchange, const std::string& why, int code) {
  if (exchange.id.is_null()) {
    Log("posting " + (exchange.method.empty() ? std::string("a response") : exchange.method) + " failed: " + why);
    return;
  }
  Json error = {{"jsonrpc", "2.0"}, {"id", exchange.id}, {"error", {{"code", code}, {"message", why}}}};
  if (on_message_) on_message_(error.dump());
}

// Sends `request` and hands each message of the answer to on_message as it arrives
// (one JSON body, or SSE events): an elicitation request in a stream must be answered
// while the call is still open.
Task<Result<HttpResponse>> McpHttpTransport::Deliver(std::shared_ptr<bool> alive, std::shared_ptr<Exchange> exchange,
                                                      HttpRequest request) {
  bool sse = false;
  std::string json_body;
  SseParser parser;
  auto deliver = [this, alive, exchange](const std::string& message) {
    if (!*alive || message.empty()) return;
    Json m = ParseJsonOrDiscarded(message);
    if (m.is_object() && !exchange->id.is_null() && m.contains("id") && m["id"] == exchange->id &&
        (m.contains("result") || m.contains("error"))) {
      exchange->answered = true;
    }
    if (on_message_) on_message_(message);
  };
  HeadersFn on_headers = [this, alive, &sse](const HttpResponse& r) {
    sse = r.Header("content-type").find("text/event-stream") != std::string::npos;
    if (std::string id = r.Header("mcp-session-id"); *alive && !id.empty()) session_id_ = id;
  };
  BodyChunkFn on_chunk = [&](std::string_view bytes) {
    if (!sse) {
      json_body.append(bytes);
      return OkStatus();
    }
    parser.Feed(bytes, [&](SseEvent&& event) { deliver(event.data); });
    return OkStatus();
  };
  Result<HttpResponse> response = HttpResponse{};
  co_await client_.Stream(std::move(request), on_chunk, on_headers, response);
  if (*alive && response.ok() && !sse && !json_body.empty()) deliver(json_body);
  co_return response;
}

Task<void> McpHttpTransport::Run(std::shared_ptr<bool> alive, std::shared_ptr<Exchange> exchange) {
  bool sent_session = !session_id_.empty();
  Result<HttpResponse> response = co_await Deliver(alive, exchange, Request("POST", exchange->body));
  if (!*alive) co_return;
  open_.erase(exchange->key);
  if (!response.ok()) {
    FailLocally(*exchange, response.status().message(), -32000);
  } else if (response->status >= 200 && response->status < 300) {
    if (std::string id = response->Header("mcp-session-id"); !id.empty()) session_id_ = id;
    if (!exchange->id.is_null() && !exchange->answered && response->status != 202) {
      FailLocally(*exchange, "the MCP server closed the response stream for " + exchange->method + " without answering",
                  -32000);
    }
  } else {
    std::string excerpt = response->body.substr(0, 300);
    // The spec says 404; some servers (server-everything 2026.8.31) answer an unknown
    // session id with 400 and a message that names it.
    bool session_lost = sent_session && (response->status == 404 ||
                                         (response->status == 400 && excerpt.find("session") != std::string::npos));
    if (session_lost) {
      session_id_.clear();
      if (on_session_lost_) on_session_lost_();
      FailLocally(*exchange, "the MCP server no longer knows this session (HTTP " + std::to_string(response->status) + ")",
                  -32001);
    } else {
      FailLocally(*exchange, "POST " + url_ + " answered HTTP " + std::to_string(response->status) + ": " + excerpt,
                  -32000);
    }
  }
  for (auto& waiter : exchange->settle_waiters) waiter->cancel();
}

void McpHttpTransport::Listen() {
  if (closed_ || session_id_.empty()) return;
  auto exchange = std::make_shared<Exchange>();
  exchange->key = next_exchange_++;
  exchange->method = "GET";
  exchange->listener = true;
  open_[exchange->key] = exchange;
  asio::co_spawn(executor_, ListenOn(alive_, exchange), asio::bind_cancellation_slot(exchange->cancel.slot(), asio::detached));
}

// The server's own stream: list_changed and requests not tied to one of our calls
// (roots/list). Servers that do not offer one answer 405.
Task<void> McpHttpTransport::ListenOn(std::shared_ptr<bool> alive, std::shared_ptr<Exchange> exchange) {
  HttpRequest get = Request("GET", "", "text/event-stream");
  constexpr int kDay = 24 * 3600 * 1000;  // the stream stays open as long as the session
  get.timeouts.first_byte_ms = timeout_ms_;
  get.timeouts.idle_ms = kDay;
  get.timeouts.total_ms = kDay;
  Result<HttpResponse> response = co_await Deliver(alive, exchange, std::move(get));
  if (!*alive) co_return;
  open_.erase(exchange->key);
  if (!response.ok() && !closed_) Log("the server's event stream ended: " + response.status().message());
}

Task<void> McpHttpTransport::Settle() {
  auto alive = alive_;
  for (;;) {
    std::shared_ptr<Exchange> unacknowledged;
    for (auto& [key, exchange] : open_) {
      if (exchange->id.is_null() && !exchange->listener) unacknowledged = exchange;
    }
    if (!unacknowledged) co_return;
    auto waiter = std::make_shared<asio::steady_timer>(executor_, std::chrono::milliseconds(timeout_ms_));
    unacknowledged->settle_waiters.push_back(waiter);
    auto [ec] = co_await waiter->async_wait(asio::as_tuple(asio::use_awaitable));
    if (!*alive || !ec) co_return;  // gone, or it did not settle in time: go on regardless
  }
}

Task<void> McpHttpTransport::Close() {
  if (closed_) co_return;
  closed_ = true;
  auto alive = alive_;
  for (auto& [key, exchange] : open_) exchange->cancel.emit(asio::cancellation_type::terminal);
  open_.clear();
  if (session_id_.empty()) co_return;
  HttpRequest del = Request("DELETE", "");
  del.timeouts.total_ms = 5000;
  Result<HttpResponse> r = co_await client_.Send(std::move(del));
  if (!*alive) co_return;
  // 405: the server does not let clients end sessions; that is allowed.
  if (!r.ok()) Log("ending the MCP session failed: " + r.status().message());
  session_id_.clear();
}

}  // namespace reins

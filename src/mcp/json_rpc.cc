#include "mcp/json_rpc.h"

#include <chrono>
#include <optional>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "domain/json_parse.h"

namespace reins {
namespace {

std::string TokenKey(const Json& token) { return token.is_string() ? token.get<std::string>() : token.dump(); }

}  // namespace

// A call in flight: the timer doubles as the wake-up, cancelled when the response (or
// a failure) arrives.
struct JsonRpcPeer::Pending {
  explicit Pending(boost::asio::any_io_executor ex) : timer(ex) {}
  boost::asio::steady_timer timer;
  std::optional<Result<Json>> result;
};

JsonRpcPeer::JsonRpcPeer(boost::asio::any_io_executor executor, std::string name, SendFn send)
    : executor_(std::move(executor)), name_(std::move(name)), send_(std::move(send)) {}

JsonRpcPeer::~JsonRpcPeer() {
  *alive_ = false;
  FailAll(Aborted("MCP session with " + name_ + " closed"));
}

Task<Result<Json>> JsonRpcPeer::Call(std::string method, Json params, int timeout_ms, ProgressFn on_progress) {
  int64_t id = next_id_++;
  if (!params.is_object()) params = Json::object();
  std::string token;
  if (on_progress) {
    token = "p" + std::to_string(id);
    params["_meta"]["progressToken"] = token;
    progress_[token] = std::move(on_progress);
  }
  auto pending = std::make_shared<Pending>(executor_);
  pending_[id] = pending;
  pending->timer.expires_after(std::chrono::milliseconds(timeout_ms));
  Json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
  send_(request.dump());
  auto alive = alive_;
  std::string peer = name_;  // `this` may be gone when the wait ends
  boost::system::error_code ec;
  // A transport may answer at once, inside send_ (an HTTP session already closed): a
  // timer cancelled before the wait began would not wake it.
  if (!pending->result) {
    auto [waited] = co_await pending->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    ec = waited;
  }
  if (!*alive) co_return Aborted("MCP session with " + peer + " closed");
  pending_.erase(id);
  if (!token.empty()) progress_.erase(token);
  if (pending->result) co_return std::move(*pending->result);
  // No response: timed out, or the caller was cancelled. Either way the server may
  // stop working on it, and a late response is ignored.
  bool timed_out = !ec;
  Notify("notifications/cancelled",
         {{"requestId", id}, {"reason", timed_out ? "timed out" : "cancelled by the client"}});
  if (timed_out) {
    co_return DeadlineExceeded("MCP server " + name_ + " did not answer " + method + " within " +
                               std::to_string(timeout_ms) + " ms");
  }
  co_return Aborted(method + " to MCP server " + name_ + " was cancelled");
}

void JsonRpcPeer::Notify(const std::string& method, Json params) {
  Json note = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) note["params"] = std::move(params);
  send_(note.dump());
}

void JsonRpcPeer::Respond(const Json& id, Result<Json> result) {
  Json response = {{"jsonrpc", "2.0"}, {"id", id}};
  if (result.ok()) {
    response["result"] = std::move(result).value();
  } else {
    int code = result.status().code() == StatusCode::kNotFound ? -32601 : -32603;
    response["error"] = {{"code", code}, {"message", result.status().message()}};
  }
  send_(response.dump());
}

void JsonRpcPeer::Receive(const std::string& text) {
  // A field of the wrong type (a numeric method, a string error code) is as malformed
  // as a line that is not JSON: counted and dropped, never thrown into the read loop.
  try {
    Dispatch(text);
  } catch (const Json::exception&) {
    ++malformed_;
  }
}

void JsonRpcPeer::Dispatch(const std::string& text) {
  Json msg = ParseJsonOrDiscarded(text);
  if (!msg.is_object() || msg.value("jsonrpc", "") != "2.0") {
    ++malformed_;
    return;
  }
  auto method = msg.find("method");
  auto id = msg.find("id");
  if (method != msg.end() && method->is_string()) {
    Json params = msg.value("params", Json::object());
    if (id == msg.end()) {  // a notification
      if (*method == "notifications/progress") {
        auto it = progress_.find(params.contains("progressToken") ? TokenKey(params["progressToken"]) : "");
        if (it != progress_.end()) it->second(params);
        return;
      }
      if (on_notification_) on_notification_(method->get<std::string>(), params);
      return;
    }
    // A request from the server: its id is in the server's own space.
    Json request_id = *id;
    std::string name = method->get<std::string>();
    if (!on_request_) {
      Respond(request_id, NotFound("method not found: " + name));
      return;
    }
    boost::asio::co_spawn(executor_, Answer(alive_, std::move(request_id), std::move(name), std::move(params)),
                          boost::asio::detached);
    return;
  }
  if (id == msg.end() || !id->is_number_integer()) {
    ++malformed_;  // a response to an id we never send (we only send integers)
    return;
  }
  auto it = pending_.find(id->get<int64_t>());
  if (it == pending_.end()) return;  // late (timed out or cancelled): ignored
  if (auto error = msg.find("error"); error != msg.end() && error->is_object()) {
    it->second->result = Status(StatusCode::kFailedPrecondition,
                                "MCP error " + std::to_string(error->value("code", 0)) + ": " + error->value("message", ""));
  } else if (auto result = msg.find("result"); result != msg.end()) {
    it->second->result = std::move(*result);  // results can be large: moved, not copied
  } else {
    it->second->result = Json::object();
  }
  it->second->timer.cancel();
}

// A member coroutine with parameters by value rather than a capturing coroutine lambda:
// GCC 12 can destroy a coroutine lambda's captures twice.
Task<void> JsonRpcPeer::Answer(std::shared_ptr<bool> alive, Json id, std::string method, Json params) {
  Result<Json> result = co_await on_request_(method, params);
  if (*alive) Respond(id, std::move(result));
}

void JsonRpcPeer::FailAll(const Status& why) {
  for (auto& [id, pending] : pending_) {
    if (!pending->result) pending->result = why;
    pending->timer.cancel();
  }
}

}  // namespace reins

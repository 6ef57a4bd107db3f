// JsonRpcPeer: JSON-RPC 2.0 over any line transport (MCP stdio, or each POST/SSE of
// Streamable HTTP). Requests are correlated per direction: the ids we send and the
// ids the server sends are separate spaces (a server may reuse an id we used), and
// responses may arrive in any order. Server requests go to a handler; progress
// notifications to the caller that asked for them. A malformed line is logged and
// dropped; a dead transport fails every call in flight with a clear error.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "reins/async.h"
#include "reins/json.h"
#include "reins/status.h"

namespace reins {

class JsonRpcPeer {
 public:
  using SendFn = std::function<void(std::string message)>;
  // Answers a request from the other side: a `result` value, or a non-OK Status whose
  // message becomes the error (code -32601 for NotFound, else -32603).
  using RequestHandler = std::function<Task<Result<Json>>(const std::string& method, const Json& params)>;
  using NotificationHandler = std::function<void(const std::string& method, const Json& params)>;
  using ProgressFn = std::function<void(const Json& params)>;

  JsonRpcPeer(boost::asio::any_io_executor executor, std::string name, SendFn send);
  ~JsonRpcPeer();

  void set_request_handler(RequestHandler h) { on_request_ = std::move(h); }
  void set_notification_handler(NotificationHandler h) { on_notification_ = std::move(h); }

  // Sends a request and waits for its response, at most `timeout_ms`. A timeout or an
  // asio cancellation of the caller sends notifications/cancelled for the request.
  // `on_progress` receives notifications/progress params for it (a progressToken is
  // added to params._meta).
  Task<Result<Json>> Call(std::string method, Json params, int timeout_ms, ProgressFn on_progress = {});
  void Notify(const std::string& method, Json params);

  // One message from the other side.
  void Receive(const std::string& text);
  // The transport is gone: every pending call fails with `why`.
  void FailAll(const Status& why);

  size_t pending() const { return pending_.size(); }
  int64_t malformed() const { return malformed_; }

 private:
  struct Pending;
  void Dispatch(const std::string& text);
  void Respond(const Json& id, Result<Json> result);
  Task<void> Answer(std::shared_ptr<bool> alive, Json id, std::string method, Json params);

  boost::asio::any_io_executor executor_;
  std::string name_;
  SendFn send_;
  RequestHandler on_request_;
  NotificationHandler on_notification_;
  int64_t next_id_ = 1;
  int64_t malformed_ = 0;
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  std::map<std::string, ProgressFn> progress_;  // progressToken -> the call that asked
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace reins

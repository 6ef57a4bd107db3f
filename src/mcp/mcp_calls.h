// McpCallDesk: the MCP calls reins has open, on the hub's thread. It exists for
// elicitation: a server may ask the person something in the middle of a call, and the
// person answers in a later turn. The desk then
//   1. hears the server's elicitation/create (Elicit) and finds the one call it is
//      about (the only call open on that server; with several open it cannot tell, and
//      declines);
//   2. returns to the runtime, for that call, a clarification envelope built from the
//      request (mcp/elicitation.h) while the MCP call stays open, parked under the
//      reins session;
//   3. when the runtime resumes the call with the person's choice (ToolRequest::answer),
//      sends `accept` with it and waits for the call's real result;
//   4. sends `cancel` when the question is withdrawn (a new request, or "stop"), when
//      the session moves on to another call, when the question waited longer than its
//      time to live, or when the hub stops.
// A call that cannot ask (deferred, or a schema reins cannot present as a choice) gets
// `decline`.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "mcp/mcp_client.h"

namespace reins {

// The caller's hold on its call, touched on the hub's thread only: Abandon() through it
// when the caller gives up (a deferred call's timeout).
struct McpCallHandle {
  std::weak_ptr<void> call;  // the desk's Open, once the call started (weak: the Open holds this)
  bool abandoned = false;
};

struct McpCallRequest {
  std::string tool;  // the server's name for it
  Json args;
  std::string session_id;
  bool may_ask = false;
  Json answer;  // resuming a parked call: the fields to accept with
  int64_t timeout_ms = 30000;  // the call's budget (the tool's timeout_ms, or the turn's rest)
  JsonRpcPeer::ProgressFn on_progress;
  std::shared_ptr<McpCallHandle> handle;  // optional
};

class McpCallDesk {
 public:
  explicit McpCallDesk(boost::asio::any_io_executor hub, int question_ttl_ms = 10 * 60 * 1000);

  // The tool result as reins sees it (McpResultToToolResult), or a clarification
  // envelope while the server waits for the person.
  Task<Result<Json>> Call(std::shared_ptr<McpClient> client, McpCallRequest request);
  // The elicitation hook of the client for `server`: {action, content?}.
  Task<Json> Elicit(std::string server, Json params);
  // The caller gave up: its call is cancelled (the server hears notifications/cancelled)
  // and Call() returns Aborted.
  void Abandon(const std::shared_ptr<McpCallHandle>& handle);
  // The person will not answer the question parked for `session_id`: cancel.
  void Withdraw(const std::string& session_id);
  // Answers every open question with cancel (the hub is stopping).
  void CancelAll();

  size_t parked() const { return parked_.size(); }

 private:
  struct Open;
  Task<void> Run(std::shared_ptr<McpClient> client, std::shared_ptr<Open> call);
  Task<Result<Json>> Await(std::shared_ptr<Open> call);
  void Answer(Open& call, Json answer);

  boost::asio::any_io_executor hub_;
  int question_ttl_ms_;
  std::map<std::string, std::vector<std::shared_ptr<Open>>> in_flight_;  // by server
  std::map<std::string, std::shared_ptr<Open>> parked_;                  // by reins session
};

}  // namespace reins

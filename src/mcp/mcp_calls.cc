#include "mcp/mcp_calls.h"

#include <algorithm>
#include <optional>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "mcp/elicitation.h"

namespace reins {

namespace asio = boost::asio;

// One MCP call reins has open.
struct McpCallDesk::Open {
  explicit Open(asio::any_io_executor ex) : wake(ex), answered(ex) {}
  std::string server;
  McpCallRequest request;
  std::optional<Result<Json>> result;
  std::optional<ElicitationQuestion> question;  // the server waits for the person
  bool asked = false;                           // the question went to the runtime
  bool abandoned = false;                       // the reins caller gave up
  std::optional<Json> answer;                   // what Elicit sends back
  asio::steady_timer wake;                      // the reins caller waits: result or question
  asio::steady_timer answered;                  // Elicit waits: the person's answer
  asio::cancellation_signal cancel;             // cancels the MCP call itself
};

McpCallDesk::McpCallDesk(asio::any_io_executor hub, int question_ttl_ms)
    : hub_(std::move(hub)), question_ttl_ms_(question_ttl_ms) {}

void McpCallDesk::Answer(Open& call, Json answer) {
  call.answer = std::move(answer);
  call.answered.cancel();
}

Task<Result<Json>> McpCallDesk::Call(std::shared_ptr<McpClient> client, McpCallRequest request) {
  if (!request.answer.is_null()) {
    auto it = parked_.find(request.session_id);
    if (it == parked_.end() || it->second->result) {
      co_return FailedPrecondition("the question " + request.tool +
                                   " asked is no longer open here (it expired, the server restarted, or another replica asked it); ask again");
    }
    std::shared_ptr<Open> call = it->second;
    parked_.erase(it);
    if (request.handle) request.handle->call = call;
    call->question.reset();
    call->asked = false;
    call->request.on_progress = std::move(request.on_progress);  // the new turn's trace
    Answer(*call, Json{{"action", "accept"}, {"content", std::move(request.answer)}});
    co_return co_await Await(call);
  }
  // The session moved on: whatever it was asked no longer applies.
  if (auto it = parked_.find(request.session_id); it != parked_.end()) {
    Answer(*it->second, Json{{"action", "cancel"}});
    parked_.erase(it);
  }
  if (request.handle && request.handle->abandoned) co_return Aborted("the call to " + request.tool + " was cancelled");
  auto call = std::make_shared<Open>(hub_);
  if (request.handle) request.handle->call = call;
  call->server = client->name();
  call->request = std::move(request);
  in_flight_[call->server].push_back(call);
  asio::co_spawn(hub_, Run(client, call), asio::bind_cancellation_slot(call->cancel.slot(), asio::detached));
  co_return co_await Await(call);
}

Task<void> McpCallDesk::Run(std::shared_ptr<McpClient> client, std::shared_ptr<Open> call) {
  JsonRpcPeer::ProgressFn forward = [call](const Json& p) {
    if (call->request.on_progress) call->request.on_progress(p);
  };
  Result<Json> result = co_await client->CallTool(call->request.tool, call->request.args, forward,
                                                  static_cast<int>(call->request.timeout_ms));
  call->result = std::move(result);
  std::vector<std::shared_ptr<Open>>& open = in_flight_[call->server];
  open.erase(std::remove(open.begin(), open.end(), call), open.end());
  call->wake.cancel();
  call->answered.cancel();  // a question still open is moot: the call is over
}

Task<Result<Json>> McpCallDesk::Await(std::shared_ptr<Open> call) {
  bool cancel_sent = false;
  for (;;) {
    if (call->abandoned && !cancel_sent) {
      cancel_sent = true;
      call->cancel.emit(asio::cancellation_type::terminal);  // the server hears notifications/cancelled
    }
    if (call->result) {
      // Only now, after notifications/cancelled went out: whatever the caller sends
      // next reaches the server after it.
      if (call->abandoned) co_return Aborted("the call to " + call->request.tool + " was cancelled");
      if (!call->result->ok()) co_return call->result->status();
      co_return McpResultToToolResult(std::move(**call->result));
    }
    if (call->question && !call->asked && !call->abandoned) {
      call->asked = true;
      parked_[call->request.session_id] = call;
      co_return ClarificationEnvelope(*call->question, call->request.args);
    }
    call->wake.expires_at(asio::steady_timer::time_point::max());
    auto [woken] = co_await call->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)woken;  // cancelled by Run, Elicit or Abandon: news to look at
  }
}

void McpCallDesk::Abandon(const std::shared_ptr<McpCallHandle>& handle) {
  handle->abandoned = true;
  if (auto call = std::static_pointer_cast<Open>(handle->call.lock())) {
    call->abandoned = true;
    call->wake.cancel();
  }
}

Task<Json> McpCallDesk::Elicit(std::string server, Json params) {
  std::vector<std::shared_ptr<Open>> candidates;
  for (const std::shared_ptr<Open>& c : in_flight_[server]) {
    if (!c->result && !c->question) candidates.push_back(c);
  }
  // With several calls open on the server, reins cannot tell which one asks.
  if (candidates.size() != 1 || !candidates[0]->request.may_ask) co_return Json{{"action", "decline"}};
  std::optional<ElicitationQuestion> question = QuestionFromElicitation(params);
  if (!question) co_return Json{{"action", "decline"}};
  std::shared_ptr<Open> call = candidates[0];
  call->question = std::move(question);
  call->answer.reset();
  call->wake.cancel();
  call->answered.expires_after(std::chrono::milliseconds(question_ttl_ms_));
  auto [expired] = co_await call->answered.async_wait(asio::as_tuple(asio::use_awaitable));
  (void)expired;  // the answer (or cancel) is in call->answer either way
  if (call->answer) {
    Json answer = std::move(*call->answer);
    call->answer.reset();
    co_return answer;
  }
  // Unanswered for too long: the server stops waiting, the session's question expires.
  if (auto it = parked_.find(call->request.session_id); it != parked_.end() && it->second == call) parked_.erase(it);
  call->question.reset();
  co_return Json{{"action", "cancel"}};
}

void McpCallDesk::Withdraw(const std::string& session_id) {
  auto it = parked_.find(session_id);
  if (it == parked_.end()) return;
  Answer(*it->second, Json{{"action", "cancel"}});
  parked_.erase(it);
}

void McpCallDesk::CancelAll() {
  for (auto& [server, calls] : in_flight_) {
    for (const std::shared_ptr<Open>& call : calls) {
      if (call->question) Answer(*call, Json{{"action", "cancel"}});
    }
  }
  parked_.clear();
}

}  // namespace reins

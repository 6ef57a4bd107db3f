// ToolBackend: where a tool really runs (fixture, builtin, HTTP, MCP). A backend
// returns the raw result; the executor normalises it into a ResultEnvelope and decides
// what happens next. A non-OK Status is a transport failure (backend down, timeout),
// recorded as an error result the model sees marked as an error.
//
// Suspension: Invoke() may suspend; it must not block the thread. Cancelling the
// awaiting coroutine (a deferred call's timeout) cancels the call where the backend can
// (MCP sends notifications/cancelled).
#pragma once

#include <functional>
#include <string>

#include "reins/async.h"
#include "reins/json.h"
#include "reins/status.h"

namespace reins {

struct ToolRequest {
  std::string tool;
  Json args;
  std::string session_id;
  std::string turn_id;
  // Stable per call: lets a backend de-duplicate a retried write (deferred outbox).
  std::string idempotency_key;
  // Progress the backend hears while the call runs (MCP notifications/progress params:
  // progress, total?, message?). Called on the caller's executor; may be empty.
  std::function<void(const Json& progress)> on_progress;
  // The person can be asked mid-call (an immediate call in a turn, not a deferred one):
  // a backend may then answer with a clarification and keep the call open (MCP
  // elicitation, docs/mcp.md).
  bool may_ask = false;
  // Resuming such a call: the person's answer (the fields to send back), else null.
  Json answer;
  // The most the call may take: the tool's timeout_ms, or less when the turn's budget
  // (limits.turn_timeout_ms) ends sooner. A backend doing real I/O enforces it in real
  // time itself; the executor also stops waiting on the clock (KeepsDeadline).
  int64_t timeout_ms = 5000;
  // The W3C trace context of this call's span (docs/telemetry.md): a backend that calls
  // over HTTP sends it as the `traceparent` header.
  std::string traceparent;
};

class ToolBackend {
 public:
  virtual ~ToolBackend() = default;
  virtual Task<Result<Json>> Invoke(const ToolRequest& request) = 0;
  // The question a call of this tool asked in `session_id` was withdrawn (superseded by
  // a new request, or cancelled): a backend holding that call open lets it go.
  virtual void Withdraw(const std::string& session_id) { (void)session_id; }
  // Whether Invoke reads ToolRequest::traceparent: the runtime derives it per call only
  // for a backend that does (a few thousand instructions a call otherwise spent).
  virtual bool ForwardsTraceContext() const { return true; }
  // True when Invoke itself ends a call at ToolRequest::timeout_ms on the runtime's
  // clock, answering DeadlineExceeded: the runtime then awaits the call as it is instead
  // of racing it against a sleep (two coroutines and a timer more per call). An
  // in-process backend whose only wait is the clock keeps it; one doing real I/O, or
  // any backend that is not sure, leaves it to the race.
  virtual bool KeepsDeadline() const { return false; }
  // True when a call can stay open across turns while the person answers its question
  // (the pipeline then resumes it with the answer instead of asking the model again).
  virtual bool ResumesQuestions() const { return false; }
};

}  // namespace reins

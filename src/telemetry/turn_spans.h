// TurnSpans: a committed turn's trace events as OpenTelemetry spans, following the GenAI
// semantic conventions v1.37.0 (docs/telemetry.md): the turn is an `invoke_agent` span,
// each model call a `chat` child span, each tool that ran an `execute_tool` child span,
// and every governance decision (a rejection and its reason, a deferral, a question, the
// floor, an approval, a rail, the audit...) a `reins.*` event on the turn's span. A
// deferred write that runs after the reply is an `execute_tool` span of its own, a child
// of its turn's span found by the turn's derived ids (span.h).
//
// Message and tool contents (reply text, arguments, results, the rails' before and
// after) are left out unless `capture_content`, as the conventions advise.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reins/trace.h"
#include "telemetry/span.h"

namespace reins::telemetry {

struct TurnTrace {
  std::string session_id;
  std::string agent;     // gen_ai.agent.name
  std::string provider;  // gen_ai.provider.name: openai, anthropic, ... (the config's)
  std::span<const TraceEvent> events;  // turn.started .. turn.completed, as committed (viewed, not owned)
  bool capture_content = false;
};

// The trace a turn belongs to and its span's id: the caller's trace when its request
// carried a `traceparent` (the turn's span is then its child), else one derived from
// the session and the turn.
struct TurnIds {
  TraceContext turn;          // trace id and the turn span's id
  std::string parent_span_id; // the caller's span, "" when none
};
TurnIds IdsOfTurn(std::string_view session_id, int turn_number, const std::string& traceparent);
// The span id of a tool call's span (response index, position in it) and of a deferred
// write's run (by its idempotency key): what an http tool backend is told as its parent.
std::string ToolSpanId(const TurnIds& turn, int response, int position);
// The span id of the turn's `number`th model call (1-based, in model.call order): what
// the model provider is told as its parent (ModelRequest::traceparent).
std::string ChatSpanId(const TurnIds& turn, int number);
std::string DeferredSpanId(const TurnIds& turn, const std::string& idempotency_key);

// The turn's span, then its children in order. Empty when `events` has no turn.started.
std::vector<Span> SpansOfTurn(const TurnTrace& trace);
// The `traceparent` a turn's request carried (its turn.started input), "" when none.
std::string TurnTraceparent(const TraceEvent& started);
// A deferred.executed event (a write that ran after its turn was committed) as a span,
// child of the span of turn `ids`.
Span SpanOfDeferredRun(const TurnIds& ids, const std::string& session_id, const TraceEvent& ran, bool capture_content);

}  // namespace reins::telemetry

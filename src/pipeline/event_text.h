// The data of the events every turn writes (turn.started, model.call, model.response,
// tool.executed, reply.final, turn.completed), written straight to text: no DOM is
// built for an event that is held and stored as text. Each writes its members in the
// order of their keys, compact, as the DOM writes them (EnvelopeText does the same), so
// an event reads and stores the same whichever way it was made;
// tests/core/event_text_test.cc holds each to the DOM it replaces. The events a turn
// writes rarely are built as a DOM and written out once (TurnContext::Emit).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "reins/envelope.h"
#include "reins/message.h"
#include "reins/model_provider.h"
#include "reins/trace.h"
#include "reins/turn.h"
#include "turn/turn_phase.h"

namespace reins {

// `reply`: how the reply will come, when the caller streams (TurnPipeline::OpenStream);
// null otherwise. `withheld`: the agent's tools not offered to the model this turn,
// [{tool, why}] (WithheldTools); null when none.
EventData TurnStartedData(std::string_view turn_id, const TurnInput& input, const Json& reply, const Json& withheld);
// The tools of `config` withheld from the model ([{tool, why}], ToolDef::withheld);
// null when none.
Json WithheldTools(const AgentConfig& config);

// `step`: the plan step the call serves; `repeat`: why the response before it is asked
// for again (its finish reason). Empty: not part of the event.
EventData ModelCallData(std::string_view model, Purpose purpose, const ToolChoice& choice, std::string_view step = {},
                        std::string_view repeat = {});

// `response`: the response's 1-based index in the turn.
EventData ModelResponseData(int response, const ModelResponse& r);

// A write call's record (pipeline/write_ledger.h): its key ("" for a read), whether
// the outcome is an earlier try's, and which try ran it.
struct ExecutedWrite {
  std::string_view key;
  bool replayed = false;
  int attempt = 1;
};

// A call that ran: its call fields (docs/trace.md), what it returned and how long it
// took. `envelope` is the result's text (EnvelopeText), the one the model is given;
// `untrusted`: the result is outside data (AGENT-CONFIG.md "Untrusted data").
EventData ToolExecutedData(const ToolCall& call, int response, int position, bool may_clarify,
                           const ResultEnvelope& result, std::string_view envelope, int64_t latency_ms,
                           bool untrusted = false, const ExecutedWrite& write = {});

// `streamed`: how much of a streamed reply the person already has.
EventData ReplyFinalData(std::string_view reply, std::optional<size_t> streamed);

EventData TurnCompletedData(TurnStatus status, TurnPhase phase);

}  // namespace reins

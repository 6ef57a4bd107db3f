// Trace events: the record of everything a turn did, in order. The scenario runner
// checks every invariant (INVARIANTS.md) against these events, so each event carries
// what a checker needs to re-derive the guarantee independently of the executor:
// model response index and call position for tool events, full arguments and results.
//
// Event types (data fields in docs/trace.md):
//   turn.started, model.call, model.response, tool.rejected, tool.skipped,
//   tool.executed, tool.progress, clarification, clarification.answered, reply.final,
//   turn.completed
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reins/json.h"

namespace reins {

struct TraceEvent {
  std::string type;
  int turn = 0;     // 1-based turn number within the session
  int64_t at_ms = 0;
  Json data = Json::object();
};

Json TraceEventToJson(const TraceEvent& e);
TraceEvent TraceEventFromJson(const Json& j);

}  // namespace reins

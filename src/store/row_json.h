// What both stores write into and read from their JSON text columns, whatever the SQL
// dialect. Internal to src/store/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/json.h"
#include "reins/message.h"
#include "reins/status.h"
#include "reins/store.h"
#include "reins/trace.h"

namespace reins::store {

// Serialises JSON for a TEXT column. Invalid UTF-8 (a model can produce it) is
// replaced rather than thrown on, so a turn is never lost to one bad byte.
std::string DumpJson(const Json& j);
// A turn's trace events as one JSON array (the form TraceEventFromJson reads), written
// without building an intermediate JSON value.
std::string DumpEvents(const std::vector<TraceEvent>& events);
void AppendEvents(std::string& out, const std::vector<TraceEvent>& events);

// The text columns of a turn's row, as both stores write them.
struct TurnText {
  std::string input;     // the TurnInput
  std::string result;    // the TurnResult without its tools (they have rows of their own)
  std::string events;    // DumpEvents
  std::string messages;  // the turn's new messages, a JSON list in order
  std::optional<std::string> idempotency_key;  // only keyed turns are unique per session
};
TurnText TurnTextOf(const TurnRecord& turn);
// The same into `out`, whose strings are cleared and keep their capacity: a store that
// commits turn after turn into one TurnText allocates nothing for its texts once warm
// (the events' text alone is over 1 KB, a size glibc serves only after merging the
// small blocks freed since its last such request; docs/PERFORMANCE.md, round 12).
void FillTurnText(const TurnRecord& turn, TurnText& out);

// Reads a stored JSON column; text that does not parse is an Internal error naming
// `where` (a corrupt row is reported, never a crash).
Result<Json> ParseStoredJson(std::string_view text, const std::string& where);
// A stored events column back into events.
Result<std::vector<TraceEvent>> ParseStoredEvents(std::string_view text, const std::string& where);

// Appends the messages stored with turn `number` of `session_id` (its messages column,
// a JSON list) to `out`.
Status AppendStoredMessages(std::string_view text, int64_t number, const std::string& session_id,
                            std::vector<Message>& out);

Status SessionNotFound(const std::string& session_id);
// InvalidArgument when a turn that begins its session (TurnRecord::new_session) names
// another session; OK otherwise. Both stores check it before writing.
Status CheckBegunSession(const TurnRecord& turn);
// RecordDeferredOutcome on an entry that is done already: a replica that took the entry
// over after its lapse delivered it too (same key) and recorded first.
Status OutcomeAlreadyRecorded(const std::string& key);
// RetryWrite or FinishWrite on a write whose outcome is recorded already.
Status WriteAlreadyFinished(const std::string& key);
// RetryWrite or FinishWrite on a write never begun (NotFound).
Status WriteNotBegun(const std::string& key);

}  // namespace reins::store

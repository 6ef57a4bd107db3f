// WriteLedger: the write-ahead record of immediate writes, so that each takes effect
// once however often its turn is tried (I5; docs/deployment.md, "Every write once").
//
// Before an immediate call to a write tool runs, its intent (tool, arguments, key) is
// committed; once it returns, its outcome. The key is what a retry of the turn proposes
// again: the session, the turn's Idempotency-Key (or its number, for a turn sent
// without one), its tool and its arguments, and how many times the turn made that very
// call before. A retried turn
// that proposes the same call finds the record and is given its outcome; a different
// call gets a new key. A record found still running is a try that never returned (its
// process died): the write is **uncertain**. It runs again, under the same key, only
// when its backend takes a key (an http backend sends it as Idempotency-Key; a tool
// whose annotations.idempotentHint is true); otherwise it does not run and the person
// is told that it may or may not have happened. A call that does not answer in time is
// uncertain too: its record stays running, and its outcome (executed, failed) carries
// the reason `uncertain` (ChainExecutor::RunWrite).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipeline/store_calls.h"
#include "reins/agent_config.h"
#include "reins/async.h"
#include "reins/clock.h"
#include "reins/store.h"
#include "turn/turn_context.h"

namespace reins {

// What to do with a write call before it runs.
struct WriteStart {
  enum class Kind {
    kRun,         // recorded now: run it
    kRetry,       // an earlier try never returned, and the backend takes its key: run it again
    kReplay,      // an earlier try returned: its outcome (`record.result`) stands
    kUncertain,   // an earlier try never returned, and the backend takes no key: not run
    kUnrecorded,  // its intent could not be stored (`error`): not run
  };
  Kind kind = Kind::kRun;
  WriteRecord record;  // the intent (kRun), or the record found
  Status error;
};

class WriteLedger {
 public:
  WriteLedger(StoreCalls& calls, Clock& clock) : calls_(calls), clock_(clock) {}

  // True when `tool`'s calls are recorded ahead: a write (not annotated read-only).
  static bool Records(const ToolDef& tool) { return tool.Writes(); }
  // True when the backend of `tool` takes an idempotency key, so that a second try under
  // the same key does not take effect twice.
  static bool TakesKey(const ToolDef& tool);
  // The key of `call`, the next write of the turn (see above).
  static std::string Key(const TurnContext& ctx, const ToolCall& call);
  // The request a turn's Idempotency-Key names: the key itself, except for the
  // OpenAI-compatible door's rerun of a failed turn ("chat-<digest>-rerun-N",
  // server/chat_handlers.cc), which asks again for the same request: its writes are
  // that request's writes, and one that ran before the failure is not run twice.
  static std::string_view RequestKey(std::string_view idempotency_key);
  // The same from its parts: `turn` is "key " + the turn's Idempotency-Key, or "turn " +
  // its number; `ordinal` counts the turn's earlier writes of this very call (same tool
  // and arguments); `args` as JSON text.
  static std::string KeyOf(std::string_view session_id, std::string_view turn, int ordinal, std::string_view tool,
                           std::string_view args);

  // Records the intent of `call` under `key`, or finds what an earlier try left.
  Task<WriteStart> Begin(const TurnContext& ctx, const ToolDef& tool, const ToolCall& call, std::string key);
  // Records what the call returned. A failure to store it is logged: the call ran, and
  // a later try finds the record running (uncertain) and acts on that.
  Task<void> Finish(WriteRecord record, const ResultEnvelope& result);

 private:
  StoreCalls& calls_;
  Clock& clock_;
};

}  // namespace reins

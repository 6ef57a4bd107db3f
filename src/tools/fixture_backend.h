// FixtureBackend: scripted tool behaviour from a scenario file or an agent's
// `backend.fixture`. Entries are tried in order; the first whose `when.args` is a
// subset of the call's arguments and whose `times` is not used up answers, with its
// `result` (raw; the executor normalises it) or its `error` (a transport failure).
// `latency_ms` passes on the injected clock (virtual time in scenario runs); one longer
// than the call's budget (ToolRequest::timeout_ms) ends at the budget, DeadlineExceeded.
//
// Thread-safety: calls may come from several threads at once (turns on several
// strands): the entry is chosen and counted under a mutex, its latency passed outside it.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

#include "reins/clock.h"
#include "reins/tool_backend.h"

namespace reins {

class FixtureBackend final : public ToolBackend {
 public:
  // `entries` is the validated fixture list (CheckFixtureEntries).
  FixtureBackend(std::string tool, Json entries, Clock& clock);
  Task<Result<Json>> Invoke(const ToolRequest& request) override;
  bool ForwardsTraceContext() const override { return false; }
  bool KeepsDeadline() const override { return true; }  // its latency passes on the clock
  int calls() const { return calls_.load(); }

 private:
  // The first entry that answers `args` and is not used up, counted as used.
  std::optional<size_t> Take(const Json& args);

  std::string tool_;
  Json entries_;  // read only
  std::mutex mu_;
  std::vector<int> used_;  // under mu_
  Clock& clock_;
  std::atomic<int> calls_ = 0;
};

// True when every key of `pattern` is in `value` with a matching value (recursively
// for mappings; lists and scalars compare equal; 1 equals 1.0).
bool JsonSubsetMatch(const Json& pattern, const Json& value);

}  // namespace reins

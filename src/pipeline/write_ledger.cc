#include "pipeline/write_ledger.h"

#include <algorithm>
#include <utility>

#include "domain/detail_log.h"
#include "domain/digest.h"

namespace reins {

bool WriteLedger::TakesKey(const ToolDef& tool) {
  if (tool.backend.kind == ToolBackendConfig::Kind::kHttp) return true;
  const auto hint = tool.annotations.find("idempotentHint");
  return hint != tool.annotations.end() && hint->is_boolean() && hint->get<bool>();
}

std::string WriteLedger::KeyOf(std::string_view session_id, std::string_view turn, int ordinal, std::string_view tool,
                               std::string_view args) {
  std::string what;
  what.append(session_id).append("\n").append(turn).append("\nwrite ").append(std::to_string(ordinal));
  what.append("\n").append(tool).append("\n").append(args);
  return "w_" + Sha256Hex(what).substr(0, 32);
}

std::string_view WriteLedger::RequestKey(std::string_view key) {
  if (!key.starts_with("chat-")) return key;
  const size_t at = key.rfind("-rerun-");
  if (at == std::string_view::npos) return key;
  const std::string_view n = key.substr(at + 7);
  const bool number = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
  return number ? key.substr(0, at) : key;
}

std::string WriteLedger::Key(const TurnContext& ctx, const ToolCall& call) {
  // What a retry of the turn sends again and the call itself; never the turn's id, which
  // each try draws anew. Only earlier writes of this very call count (the same tool and
  // arguments, asked for twice on purpose): a read, or a write that a guard refused or
  // the model dropped, in one try and not in another changes no other write's key.
  const Json& args = call.args_valid ? call.args : Json(call.arguments_text);
  int earlier_writes = 0;
  for (const ToolOutcome& t : ctx.result.tools) {
    earlier_writes += t.idempotency_key.starts_with("w_") && t.name == call.name && t.args == args ? 1 : 0;
  }
  const std::string turn = ctx.input.idempotency_key.empty()
                               ? "turn " + std::to_string(ctx.result.turn_number)
                               : "key " + std::string(RequestKey(ctx.input.idempotency_key));
  return KeyOf(ctx.session_id, turn, earlier_writes, call.name, call.args_valid ? call.args.dump() : call.arguments_text);
}

Task<WriteStart> WriteLedger::Begin(const TurnContext& ctx, const ToolDef& tool, const ToolCall& call,
                                    std::string key) {
  WriteRecord wanted;
  wanted.session_id = std::string(ctx.session_id);
  wanted.key = std::move(key);
  wanted.turn_id = ctx.result.turn_id;
  wanted.tool = call.name;
  wanted.args = call.args_valid ? call.args : Json(call.arguments_text);
  wanted.started_ms = clock_.NowMs();
  WriteStart start;
  // Twice at most: a retry that finds the earlier try finished meanwhile (its outcome
  // recorded late, by a replica whose claim lapsed) reads the record again and replays it.
  for (int look = 0;; ++look) {
    start.record = wanted;
    std::function<Result<std::optional<WriteRecord>>(Store&)> begin = [&wanted](Store& store) {
      return store.BeginWrite(wanted);
    };
    Result<std::optional<WriteRecord>> found = co_await calls_.Run(std::move(begin));
    if (!found.ok()) {
      start.kind = WriteStart::Kind::kUnrecorded;
      start.error = found.status();
      co_return start;
    }
    if (!*found) co_return start;  // recorded now: run it
    start.record = std::move(**found);
    WriteRecord& record = start.record;
    switch (record.state) {
      case WriteRecord::State::kSucceeded:
      case WriteRecord::State::kFailed:
        start.kind = WriteStart::Kind::kReplay;
        co_return start;
      case WriteRecord::State::kUncertain:
        start.kind = WriteStart::Kind::kUncertain;
        co_return start;
      case WriteRecord::State::kRunning:
        break;
    }
    if (!TakesKey(tool)) break;
    record.turn_id = ctx.result.turn_id;
    record.attempts += 1;
    std::function<Status(Store&)> retry = [&record](Store& store) { return store.RetryWrite(record); };
    Status counted = co_await calls_.Run(std::move(retry));
    if (counted.code() == StatusCode::kAlreadyExists && look == 0) continue;
    start.kind = counted.ok() ? WriteStart::Kind::kRetry : WriteStart::Kind::kUnrecorded;
    start.error = std::move(counted);
    co_return start;
  }
  WriteRecord& record = start.record;
  // Not run again: recorded uncertain, so that every later try says so too.
  start.kind = WriteStart::Kind::kUncertain;
  WriteRecord uncertain = record;
  uncertain.state = WriteRecord::State::kUncertain;
  uncertain.finished_ms = clock_.NowMs();
  std::function<Status(Store&)> finish = [&uncertain](Store& store) { return store.FinishWrite(uncertain); };
  if (Status s = co_await calls_.Run(std::move(finish)); !s.ok()) LogDetail("writes", "recording " + record.key + " uncertain: " + s.message());
  co_return start;
}

Task<void> WriteLedger::Finish(WriteRecord record, const ResultEnvelope& result) {
  record.state = result.success ? WriteRecord::State::kSucceeded : WriteRecord::State::kFailed;
  record.result = EnvelopeToJson(result);
  record.finished_ms = clock_.NowMs();
  std::function<Status(Store&)> finish = [&record](Store& store) { return store.FinishWrite(record); };
  Status s = co_await calls_.Run(std::move(finish));
  if (!s.ok()) LogDetail("writes", "recording the outcome of " + record.key + ": " + s.message());
}

}  // namespace reins

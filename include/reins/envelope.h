// The standard result envelope every tool result is normalised into (seed 001):
// success, next_action, data, clarification, error, instruction_for_ai, lease.
// The executor decides what happens next from `next_action` alone; the model never has
// to parse a tool-specific shape to know whether to stop.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/heap_optional.h"
#include "reins/json.h"

namespace reins {

enum class NextAction { kContinue, kClarificationNeeded, kComplete, kError };
std::string_view NextActionName(NextAction a);
bool ParseNextAction(std::string_view name, NextAction* a);

struct ClarificationOption {
  std::string id;  // a real entity id, never a positional placeholder
  std::string title;
  std::string subtitle;
  std::optional<double> confidence;
  Json metadata;  // null when absent
};

struct Clarification {
  std::string type;
  std::string question;
  std::vector<ClarificationOption> options;
};

struct LeaseRequest {
  std::string domain;
  int ttl_s = 0;
};

struct ResultEnvelope {
  bool success = true;
  NextAction next_action = NextAction::kContinue;
  Json data = Json::object();
  // Rare, so on the heap (HeapOptional): a turn keeps each tool's envelope until its
  // commit, and these two as std::optional were 144 of its 232 bytes.
  HeapOptional<Clarification> clarification;
  std::string error;
  std::string instruction_for_ai;
  HeapOptional<LeaseRequest> lease;

  // A failure: success false, next_action error.
  static ResultEnvelope Failure(std::string error);
  // True when the executor must stop running further calls of the same response.
  bool StopsChain() const { return !success || next_action != NextAction::kContinue; }
};

// Turns any raw tool result into an envelope, following SCENARIOS.md:
// - an object with `success` or `next_action` is an envelope and is validated; one that
//   breaks the rules becomes an error result "malformed tool result: ...";
// - anything else (plain JSON, MCP content) is data: success true, next_action continue.
// `success: false` without a next_action means next_action error; `next_action: error`
// means success false.
ResultEnvelope NormaliseToolResult(const Json& raw);
// The same, moving the result's data into the envelope instead of copying it (a tool's
// result can be large; the caller is done with it).
ResultEnvelope NormaliseToolResult(Json&& raw);

Json EnvelopeToJson(const ResultEnvelope& e);
Json ClarificationToJson(const Clarification& c);

}  // namespace reins

// An MCP server's elicitation/create, asked of the person as a reins clarification.
//
// A clarification is a choice among options, so an elicitation becomes one when its
// requested schema is a single choice: one field with an `enum` (titles from
// `enumNames`), a `oneOf` of `const`s (titles from `title`), or a boolean (Yes / No),
// and no other required field. Anything else (free text, several required fields) is
// declined: reins cannot ask it without the model inventing the answer.
//
// Each option carries in its metadata what resuming needs after the person chose:
// `elicitation: {field, value}` and `resume_args`, the call's original arguments
// (the runtime replays the call with them; docs/mcp.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reins/json.h"

namespace reins {

inline constexpr const char* kElicitationClarificationType = "elicitation";

struct ElicitationChoice {
  std::string id;     // what the person selects
  std::string title;
  Json value;         // what goes back to the server for the field
};

struct ElicitationQuestion {
  std::string message;
  std::string field;
  std::vector<ElicitationChoice> choices;
};

// The question, or nullopt when the schema is not a single choice.
std::optional<ElicitationQuestion> QuestionFromElicitation(const Json& params);

// The tool result that stops the chain and asks the person.
Json ClarificationEnvelope(const ElicitationQuestion& q, const Json& resume_args);

}  // namespace reins

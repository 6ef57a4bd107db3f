// How an approval's question shows a call to the person who answers it: the tool by its
// title and its arguments in words ("recipient “GB82 WEST…”, amount 98.7"), an entity id
// by the line its clarification option was shown as ("patient “Maria Garcia (born
// 2 March 1962)”"), never as raw
// JSON; or the tool's own approval.prompt with its {arg} placeholders filled the same way.
#pragma once

#include <optional>
#include <string>

#include "reins/agent_config.h"
#include "reins/json.h"

namespace reins {

class EntityLedger;

// An argument's title in the tool's schema, when it has one ("recipient IBAN").
std::optional<std::string> ArgTitle(const ToolDef& tool, const std::string& arg);
// An argument's name as a person reads it: its title, else its name with spaces for '_'
// ("recipient id").
std::string ArgLabel(const ToolDef& tool, const std::string& arg);

// A value in words: a string quoted (and clipped), a number as written, yes or no, a list
// of values joined, a mapping as its members. With `ids`, a string that is an id a
// clarification option showed the person reads as that option's title.
std::string ValueWords(const Json& value, const EntityLedger* ids = nullptr);

// Every argument, label and value: "recipient “GB82…”, amount 98.7"; "" for none.
std::string ArgsInWords(const ToolDef& tool, const Json& args, const EntityLedger* ids = nullptr);

// A call as the person reads it: “money transfer” (recipient “GB82…”, amount 98.7).
std::string CallInWords(const ToolDef& tool, const Json& args, const EntityLedger* ids = nullptr);

// The question an approval asks when nothing more is to be said about the call:
// "Should I go ahead with “money transfer” (...)? (approve or deny)".
std::string ApprovalQuestion(const ToolDef& tool, const Json& args, const EntityLedger* ids = nullptr);

// The question a tool's approval rule asks: its prompt with each {arg} the argument's
// value in words (an id as its option's title, text unquoted: "Refill 120 units of
// metformin for Maria Garcia?"), or, without a prompt, ApprovalQuestion.
std::string RulePrompt(const ToolDef& tool, const Json& args, const EntityLedger* ids);

// A rule's `when` in words, for the trace: "units above 90 and drug one of “a”, “b”".
std::string ConditionsInWords(const ToolDef& tool);

}  // namespace reins

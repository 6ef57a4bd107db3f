// Typed answers: what a person types back to a question reins asked, read without
// guessing. A clarification's options are matched by number ("2", "#2", "second"),
// id, the exact line reins displayed for an option ("Maria Garcia (born 2 November
// 1991)"), title, or a part that only one option's line has ("1991"); an answer that
// fits several options, or none, matches nothing and the question is asked again with
// the options numbered. An approval is answered yes or no in words. The OpenAI-compatible
// door and `reins chat` share these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/envelope.h"

namespace reins {

// The line reins shows for an option: its title, with its subtitle in brackets.
std::string OptionLine(const ClarificationOption& option);
// The options as a numbered list, one per line: "1. Maria Garcia (born 2 March 1962)".
std::string NumberedOptions(const std::vector<ClarificationOption>& options);

struct OptionMatch {
  enum class Kind { kOne, kSeveral, kNone };
  Kind kind = Kind::kNone;
  size_t index = 0;  // kOne: the option
};
OptionMatch MatchOption(const std::vector<ClarificationOption>& options, std::string_view answer);

// The question asked again after an answer that fit several options or none, ending
// "Answer with its number:" (the numbered options go under it).
std::string AskAgain(const Clarification& clarification, const OptionMatch& match);

// yes / no (approve, deny, go ahead, ok, y, n, ...) typed to an approval; nothing for
// anything else.
std::optional<bool> TypedDecision(std::string_view answer);

}  // namespace reins

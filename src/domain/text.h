// Plain-text helpers every layer shares: ASCII case folding and the one rule for where a
// sentence ends (the rails, the scenario checks and the harm detectors all split replies
// by it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reins {

// `s` with A-Z folded to a-z; other bytes (UTF-8 included) as they are.
std::string AsciiLower(std::string_view s);

// Sentences of a reply: a piece ends after . ! or ? followed by whitespace or the end,
// and at a line break (which the piece keeps). Pieces are not trimmed; empty text has none.
std::vector<std::string> Sentences(std::string_view text);

}  // namespace reins

// Plain-text helpers every layer shares: ASCII case folding, the one rule for where a
// sentence ends (the rails, the scenario checks and the harm detectors all split replies
// by it), and words and their stems. Only the tokenizer is shared: what a sentence
// means is each reader's own judgement (the eval's harm detectors must not grade a
// policy by the policy's own rules).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reins {

// `s` with A-Z folded to a-z; other bytes (UTF-8 included) as they are.
std::string AsciiLower(std::string_view s);
// True when `a` and `b` are equal with A-Z folded to a-z (HTTP header names), without
// a copy of either.
bool EqualsNoCase(std::string_view a, std::string_view b);
// Which field of header lines ("Name: value\r\n" each) a lookup takes when a name repeats.
enum class Repeated { kFirst, kLast };
// The value of the field named `name` (case-insensitive) in `lines`, as written by the
// HTTP server's requests and the HTTP client's responses; "" when there is none.
std::string_view HeaderLineValue(std::string_view lines, std::string_view name, Repeated which);

// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF). ASCII is checked eight bytes at a time.
bool IsWellFormedUtf8(std::string_view s);

// `s` without the ASCII whitespace (space, tab, CR, LF, VT, FF) at either end.
std::string_view TrimmedSpace(std::string_view s);

// `s` as it is when it fits in `max` bytes, else at most its first `max` - 3 bytes (never
// inside a UTF-8 sequence) and "...": a long value on one line of a log or a message.
std::string Clipped(std::string_view s, size_t max);

// The first `max` bytes of `s` or fewer, never cut inside a UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view s, size_t max);

// `s` with each %XX (two hex digits) made the byte it names; a % not followed by two hex
// digits stays as it is.
std::string PercentDecoded(std::string_view s);

// The {name} placeholders of a template ("Send {amount} to {recipient}?"), in order: a
// name starts with a letter, '_' or '$' and holds letters, digits and _ . - [ ] * $;
// other braces are text.
std::vector<std::string> Placeholders(std::string_view text);
// `text` with each placeholder replaced by what `fill` gives for its name.
template <typename Fill>
std::string FillPlaceholders(std::string_view text, Fill fill);

// Sentences of a reply: a piece ends after . ! or ? followed by whitespace or the end,
// and at a line break (which the piece keeps); not after a title before a name ("St.
// Luke's", "Dr. Patel"). Pieces are not trimmed; empty text has none.
std::vector<std::string> Sentences(std::string_view text);

// Text that is still being written (a streamed reply): the length of its prefix made
// of whole sentences by the rule above. A . ! or ? at the very end does not end one
// yet ("3." may become "3.5"); a line break does.
size_t CompleteSentencesEnd(std::string_view text);

// Lower-case words: letters and apostrophes ("i've", "request's"); a typographic
// apostrophe counts as one.
std::vector<std::string> Words(std::string_view text);

// One form for a verb's tenses and a noun's number: "submitted", "submits" and
// "submit" -> "submit"; "scheduled" and "schedule" -> "schedul"; "notified" -> "notify".
std::string Stem(std::string_view word);

// A past form that does not end in -ed ("sent", "found", "taken").
bool IsIrregularPast(std::string_view word);

// The words of an identifier, lower-cased: "submit_prayer_request", "lookupWeather",
// "web.search".
std::vector<std::string> IdentifierWords(std::string_view name);

namespace text_detail {
// Where the placeholder at text[open] (a '{') ends: the index of its '}', or npos.
size_t PlaceholderEnd(std::string_view text, size_t open);
}  // namespace text_detail

template <typename Fill>
std::string FillPlaceholders(std::string_view text, Fill fill) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const size_t close = text_detail::PlaceholderEnd(text, open);
    if (close == std::string_view::npos) {
      out.append(text.substr(i, open + 1 - i));
      i = open + 1;
      continue;
    }
    out.append(text.substr(i, open - i));
    out += fill(std::string(text.substr(open + 1, close - open - 1)));
    i = close + 1;
  }
  out.append(text.substr(i));
  return out;
}

}  // namespace reins

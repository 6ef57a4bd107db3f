// Outside values: the parts of a text or a JSON value that can be traced from where they
// were read to where they are used (AGENT-CONFIG.md "Untrusted data"). Two kinds:
//   - identifiers inside text: e-mail addresses, URLs and host names, IBANs, phone and
//     account numbers, and tokens of 8 or more characters that mix letters and digits;
//   - whole string values of 4 or more characters (a leaf of a tool result, a whole
//     argument).
// Each is a normalised key, its kind first, so that the same value written two ways is
// one key: "email:ana@example.com", "url:evil.example/pay", "host:evil.example",
// "iban:GB82WEST12345698765432", "phone:5551234567" (digits, the last ten),
// "token:ord-7731x", "value:riverside view" (case and surrounding space folded; a value
// over 64 bytes by its hash: "value#1f0c...").
//
// Value-level provenance is exact for identifiers and unsound against values the model
// paraphrases or re-encodes (docs/security.md, "Prompt injection").
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reins/json.h"

namespace reins {

enum class IdentifierKind { kEmail, kUrl, kHost, kIban, kPhone, kToken };

struct Identifier {
  IdentifierKind kind;
  std::string key;   // normalised, with its kind: "email:ana@example.com"
  size_t begin = 0;  // where it is written in the text, [begin, end)
  size_t end = 0;
};

// The identifiers in `text`, in order, none overlapping. A URL also yields its host
// (same span), so that a link and its bare host name are the same outside value.
std::vector<Identifier> FindIdentifiers(std::string_view text);

// The key of a whole string value: none for one shorter than 4 characters.
std::optional<std::string> WholeValueKey(std::string_view value);

// Each string leaf of `value` (object keys aside), depth first; `visit` returns false to
// stop early.
void ForEachString(const Json& value, const std::function<bool(const std::string& text)>& visit);

// Every key of `value`: for each string leaf, its whole value and the identifiers inside
// it. Numbers, booleans and null give none. `sink` returns false to stop early.
void ForEachKey(const Json& value, const std::function<bool(const std::string& key)>& sink);

// `needle` in `haystack` with no letter or digit right before or after it (both as the
// caller cased them: lower-case both for a search without regard to case).
bool ContainsWord(std::string_view haystack, std::string_view needle);

// Whether a string may have been copied out of outside prose, and is compared with the
// text of untrusted results as well as by its identifiers and whole value (docs/
// security.md): two words or more, not itself one identifier, not a number. A single
// word is ordinary language ("Thursday"); an identifier is judged as one.
bool ProseValue(std::string_view value);

// Whether `key` names a link a reply may carry (a URL or a host name).
bool IsLinkKey(std::string_view key);

// What trusted sources hold, as AGENT-CONFIG.md reads them: the person's words and the
// agent file as text (an identifier among its identifiers; a whole value word-bounded,
// case aside), trusted tools' results as values (a key among theirs).
class TrustedCorpus {
 public:
  void AddText(std::string_view text);
  void AddValue(const Json& value);
  void AddKey(std::string key) { keys_.insert(std::move(key)); }
  // Whether a trusted source holds `key`, which `raw` (the string it was read from)
  // stands for.
  bool Holds(const std::string& key, std::string_view raw) const;

 private:
  std::set<std::string> keys_;
  std::vector<std::string> lower_texts_;
};

}  // namespace reins

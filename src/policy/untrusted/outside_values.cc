#include "policy/untrusted/outside_values.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <cstdint>
#include <cstdio>

#include <re2/re2.h>

#include "domain/text.h"

namespace reins {
namespace {

// Top-level domains a bare host name may end in. A closed list: with any two letters,
// file names (notes.md, run.sh, main.py) would read as hosts. A URL written with its
// scheme or "www." needs none of them.
constexpr const char* kTlds =
    "com|org|net|edu|gov|mil|int|info|biz|io|co|ai|app|dev|me|tv|us|uk|de|fr|es|it|nl|eu|ca|au|ch|se|no|fi|dk|be|"
    "at|ie|pt|jp|cn|ru|br|mx|nz|za|kr|xyz|online|site|top|club|shop|store|tech|cloud|page|blog|news|example|test";

// The pattern of each kind, in the order they are tried at a position: a URL before the
// e-mail or host inside it, an IBAN before the token it also is.
constexpr const char* kUrl = "(?i:https?://|www\\.)[^\\s<>\"'`\\[\\](){}|\\\\^]+";
constexpr const char* kEmail = "[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\\.)+[A-Za-z]{2,}";
constexpr const char* kIban = "\\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\\b";
constexpr const char* kPhone = "(?:\\+|\\b)[0-9](?:[ ().-]{0,2}[0-9]){6,}\\b";
constexpr const char* kToken = "\\b[A-Za-z0-9][A-Za-z0-9_-]{6,}[A-Za-z0-9]\\b";

std::string HostPattern() {
  return std::string("\\b(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?i:") + kTlds + ")\\b";
}

// Every kind in one alternation, to find where the next identifier is and how long it
// is (leftmost first). Asked for the whole match only, RE2 answers from its DFA, six
// times faster than with a group per kind; which kind it is, the kinds' own patterns
// tell on the match alone.
const RE2& Pattern() {
  static const RE2 kPattern("(?:" + std::string(kUrl) + ")|(?:" + kEmail + ")|(?:" + kIban + ")|(?:" + HostPattern() +
                            ")|(?:" + kPhone + ")|(?:" + kToken + ")");
  return kPattern;
}

// The kind of an identifier the pattern found: the first whose own pattern matches it
// whole, in the alternation's order.
std::optional<IdentifierKind> KindOf(std::string_view match) {
  static const RE2 kinds[] = {RE2(kUrl), RE2(kEmail), RE2(kIban), RE2(HostPattern()), RE2(kPhone), RE2(kToken)};
  static constexpr IdentifierKind kOrder[] = {IdentifierKind::kUrl,  IdentifierKind::kEmail, IdentifierKind::kIban,
                                              IdentifierKind::kHost, IdentifierKind::kPhone, IdentifierKind::kToken};
  for (size_t i = 0; i < std::size(kinds); ++i) {
    if (RE2::FullMatch(re2::StringPiece(match.data(), match.size()), kinds[i])) return kOrder[i];
  }
  return std::nullopt;
}

// Dates and times are not identifiers, however many digits they have.
bool LooksLikeDate(std::string_view s) {
  static const RE2 kDate("^(?:[0-9]{4}[-/.][0-9]{1,2}[-/.][0-9]{1,2}|[0-9]{1,2}[-/.][0-9]{1,2}[-/.][0-9]{2,4}\\b)");
  return RE2::PartialMatch(s, kDate);
}

// "1234567.89": a sum of money, not an account.
bool IsAmount(std::string_view s) {
  static const RE2 kAmount("[0-9]+[.,][0-9]{1,2}");
  return RE2::FullMatch(s, kAmount);
}

bool IsNumber(std::string_view s) {
  static const RE2 kNumber("[-+]?(?:[0-9]+(?:[.,][0-9]+)*|[.,][0-9]+)");
  return RE2::FullMatch(s, kNumber);
}

std::string Digits(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c >= '0' && c <= '9') out += c;
  }
  return out;
}

// "www.Evil.example" -> "evil.example"
std::string HostKey(std::string_view host) {
  std::string h = AsciiLower(host);
  if (h.starts_with("www.")) h.erase(0, 4);
  while (!h.empty() && h.back() == '.') h.pop_back();
  return h;
}

// A URL's host: after the scheme and any user, before a path, query, fragment or port.
std::string_view HostOf(std::string_view url) {
  if (size_t scheme = url.find("://"); scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  if (size_t at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
  return url.substr(0, url.find(':'));
}

std::string UrlKey(std::string_view url) {
  std::string u = AsciiLower(url);
  for (const char* scheme : {"https://", "http://"}) {
    if (u.starts_with(scheme)) u.erase(0, std::string_view(scheme).size());
  }
  if (u.starts_with("www.")) u.erase(0, 4);
  while (!u.empty() && u.back() == '/') u.pop_back();
  return u;
}

// A URL ends before the punctuation of the sentence around it.
size_t TrimUrlEnd(std::string_view text, size_t begin, size_t end) {
  while (end > begin && std::string_view(".,;:!?'\")]}*_").find(text[end - 1]) != std::string_view::npos) --end;
  return end;
}

bool HasLetterAndDigit(std::string_view s) {
  const bool letter = std::any_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  const bool digit = std::any_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return letter && digit;
}

size_t CodePoints(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

}  // namespace

bool ContainsWord(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return false;
  for (size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + 1)) {
    const size_t after = at + needle.size();
    const bool open = at == 0 || !IsWordByte(haystack[at - 1]) || !IsWordByte(needle.front());
    const bool close = after == haystack.size() || !IsWordByte(haystack[after]) || !IsWordByte(needle.back());
    if (open && close) return true;
  }
  return false;
}

std::vector<Identifier> FindIdentifiers(std::string_view text) {
  std::vector<Identifier> out;
  const RE2& re = Pattern();
  re2::StringPiece found;
  size_t pos = 0;
  while (pos < text.size() &&
         re.Match(re2::StringPiece(text.data(), text.size()), pos, text.size(), RE2::UNANCHORED, &found, 1)) {
    const size_t begin = static_cast<size_t>(found.data() - text.data());
    size_t end = begin + found.size();
    pos = std::max(end, begin + 1);
    const std::string_view match(found.data(), found.size());
    switch (KindOf(match).value_or(IdentifierKind::kToken)) {
      case IdentifierKind::kUrl: {
        end = TrimUrlEnd(text, begin, end);
        const std::string_view url = text.substr(begin, end - begin);
        out.push_back({IdentifierKind::kUrl, "url:" + UrlKey(url), begin, end});
        if (std::string host = HostKey(HostOf(url)); !host.empty()) {
          out.push_back({IdentifierKind::kHost, "host:" + host, begin, end});
        }
        break;
      }
      case IdentifierKind::kEmail:
        out.push_back({IdentifierKind::kEmail, "email:" + AsciiLower(match), begin, end});
        break;
      case IdentifierKind::kIban: {
        std::string iban;
        for (char c : match) {
          if (c != ' ') iban += c;
        }
        if (iban.size() >= 15 && Digits(iban).size() >= 6) out.push_back({IdentifierKind::kIban, "iban:" + iban, begin, end});
        break;
      }
      case IdentifierKind::kHost:
        out.push_back({IdentifierKind::kHost, "host:" + HostKey(match), begin, end});
        break;
      case IdentifierKind::kPhone: {
        if (LooksLikeDate(match) || IsAmount(match)) break;
        const std::string digits = Digits(match);
        out.push_back({IdentifierKind::kPhone, "phone:" + digits.substr(digits.size() > 10 ? digits.size() - 10 : 0), begin, end});
        break;
      }
      case IdentifierKind::kToken:
        if (HasLetterAndDigit(match) && !LooksLikeDate(match)) {
          out.push_back({IdentifierKind::kToken, "token:" + AsciiLower(match), begin, end});
        }
        break;
    }
  }
  return out;
}

std::optional<std::string> WholeValueKey(std::string_view value) {
  value = TrimmedSpace(value);
  if (CodePoints(value) < 4 || IsNumber(value)) return std::nullopt;
  std::string lower = AsciiLower(value);
  if (lower.size() <= 64) return "value:" + lower;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a: a long value by its fingerprint
  for (unsigned char c : lower) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string("value#") + hex;
}

void ForEachString(const Json& value, const std::function<bool(const std::string& text)>& visit) {
  std::vector<const Json*> stack{&value};
  while (!stack.empty()) {
    const Json* v = stack.back();
    stack.pop_back();
    if (v->is_object() || v->is_array()) {
      for (const Json& child : *v) stack.push_back(&child);
    } else if (v->is_string() && !visit(v->get_ref<const std::string&>())) {
      return;
    }
  }
}

void ForEachKey(const Json& value, const std::function<bool(const std::string& key)>& sink) {
  ForEachString(value, [&](const std::string& text) {
    if (std::optional<std::string> whole = WholeValueKey(text); whole && !sink(*whole)) return false;
    for (const Identifier& id : FindIdentifiers(text)) {
      if (!sink(id.key)) return false;
    }
    return true;
  });
}

bool ProseValue(std::string_view value) {
  value = TrimmedSpace(value);
  if (!WholeValueKey(value) || value.find_first_of(" \t\n") == std::string_view::npos) return false;
  const std::vector<Identifier> ids = FindIdentifiers(value);
  return ids.empty() || ids.front().begin != 0 || ids.front().end != value.size();
}

bool IsLinkKey(std::string_view key) { return key.starts_with("url:") || key.starts_with("host:"); }

void TrustedCorpus::AddText(std::string_view text) {
  for (Identifier& id : FindIdentifiers(text)) keys_.insert(std::move(id.key));
  lower_texts_.push_back(AsciiLower(text));
}

void TrustedCorpus::AddValue(const Json& value) {
  ForEachKey(value, [this](const std::string& key) {
    keys_.insert(key);
    return true;
  });
}

bool TrustedCorpus::Holds(const std::string& key, std::string_view raw) const {
  if (keys_.count(key) > 0) return true;
  if (!key.starts_with("value")) return false;
  const std::string needle = AsciiLower(TrimmedSpace(raw));
  return std::any_of(lower_texts_.begin(), lower_texts_.end(), [&](const std::string& t) { return ContainsWord(t, needle); });
}

}  // namespace reins

#include "domain/text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

namespace reins {
namespace {

// A-Z to a-z. Not std::tolower: no locale, no call per byte.
char FoldAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Past forms that do not end in -ed, and their verbs.
const std::map<std::string, std::string, std::less<>>& Irregular() {
  static const std::map<std::string, std::string, std::less<>> kPast = {
      {"sent", "send"},   {"made", "make"},   {"found", "find"}, {"told", "tell"},    {"paid", "pay"},
      {"bought", "buy"},  {"wrote", "write"}, {"written", "write"}, {"shown", "show"}, {"got", "get"},
      {"gotten", "get"},  {"took", "take"},   {"taken", "take"}, {"ran", "run"},      {"gave", "give"},
      {"given", "give"},  {"put", "put"},     {"set", "set"},    {"left", "leave"},   {"kept", "keep"},
      {"held", "hold"},   {"met", "meet"},    {"done", "do"},    {"did", "do"}};
  return kPast;
}

bool IsVowel(char c) { return std::string_view("aeiouy").find(c) != std::string_view::npos; }

constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// True when the one to seven bytes from `p` to `end` are all ASCII, read in one or two
// loads instead of one by one: most strings checked are short keys and values.
bool ShortRunIsAscii(const unsigned char* p, const unsigned char* end) {
  const auto n = static_cast<size_t>(end - p);
  if (n >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, p, 4);
    std::memcpy(&tail, end - 4, 4);
    return ((head | tail) & 0x80808080U) == 0;
  }
  return ((p[0] | p[n / 2] | p[n - 1]) & 0x80) == 0;  // each of the one to three bytes
}

}  // namespace

bool IsWellFormedUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* end = p + s.size();
  while (p < end) {
    if (end - p >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if ((word & kHighBits) == 0) {
        p += 8;
        continue;
      }
    } else if (ShortRunIsAscii(p, end)) {
      return true;
    }
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t len = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) low = 0xA0;   // overlong
      if (c == 0xED) high = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) low = 0x90;   // overlong
      if (c == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) < len || p[1] < low || p[1] > high) return false;
    for (size_t i = 2; i < len; ++i) {
      if (p[i] < 0x80 || p[i] > 0xBF) return false;
    }
    p += len;
  }
  return true;
}

std::string_view TrimmedSpace(std::string_view s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string Clipped(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(Utf8Prefix(s, max - 3)) + "...";
}

std::string_view Utf8Prefix(std::string_view s, size_t max) {
  size_t keep = std::min(max, s.size());
  while (keep > 0 && keep < s.size() && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
  return s.substr(0, keep);
}

std::string PercentDecoded(std::string_view s) {
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = FoldAscii(c);
  return out;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return FoldAscii(x) == FoldAscii(y); });
}

std::string_view HeaderLineValue(std::string_view lines, std::string_view name, Repeated which) {
  std::string_view found;
  // (A field's value holds no line break: both HTTP parsers refuse one.)
  for (size_t at = 0; at < lines.size();) {
    const size_t end = std::min(lines.find("\r\n", at), lines.size());
    const std::string_view line = lines.substr(at, end - at);
    if (line.size() >= name.size() + 2 && EqualsNoCase(line.substr(0, name.size()), name) &&
        line.substr(name.size(), 2) == ": ") {
      found = line.substr(name.size() + 2);
      if (which == Repeated::kFirst) break;
    }
    at = end + 2;
  }
  return found;
}

namespace {

// The '.' at `i` ends a title before a name ("St. Luke's", "Dr. Patel") or "e.g."/"i.e.",
// not a sentence.
bool EndsTitle(std::string_view text, size_t i) {
  if (i >= 3 && text[i - 2] == '.' && (text.compare(i - 3, 3, "e.g") == 0 || text.compare(i - 3, 3, "i.e") == 0 ||
                                       text.compare(i - 3, 3, "E.g") == 0 || text.compare(i - 3, 3, "I.e") == 0)) {
    return true;
  }
  size_t a = i;
  while (a > 0 && std::isalpha(static_cast<unsigned char>(text[a - 1]))) --a;
  if (i - a < 2 || i - a > 4 || (a > 0 && !std::isspace(static_cast<unsigned char>(text[a - 1])) && text[a - 1] != '(')) return false;
  std::string word(text.substr(a, i - a));
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> kTitles = {"st", "dr", "mr", "mrs", "ms", "mt", "ft", "jr", "sr", "prof", "rev", "fr"};
  // Streamed text that stops right after it waits for the name.
  return kTitles.count(word) > 0 && (i + 2 >= text.size() || std::isupper(static_cast<unsigned char>(text[i + 2])));
}

}  // namespace

std::vector<std::string> Sentences(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool end = c == '\n' || ((c == '.' || c == '!' || c == '?') &&
                             (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1]))) &&
                             !(c == '.' && EndsTitle(text, i)));
    if (!end) continue;
    if (i + 1 > start) out.emplace_back(text.substr(start, i + 1 - start));
    start = i + 1;
  }
  if (start < text.size()) out.emplace_back(text.substr(start));
  return out;
}

size_t CompleteSentencesEnd(std::string_view text) {
  size_t end = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool stop = c == '.' || c == '!' || c == '?';
    if (c == '\n' || (stop && i + 1 < text.size() && std::isspace(static_cast<unsigned char>(text[i + 1])) &&
                       !(c == '.' && EndsTitle(text, i)))) {
      end = i + 1;
    }
  }
  return end;
}

// Lower-case words: letters and apostrophes ("i've", "request's"); a typographic
// apostrophe counts as one.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    while (!word.empty() && word.back() == '\'') word.pop_back();
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c)) {
      word += static_cast<char>(std::tolower(c));
    } else if (c == '\'' && !word.empty()) {
      word += '\'';
    } else if (c == 0xE2 && i + 2 < text.size() && text.substr(i, 3) == "\xE2\x80\x99" && !word.empty()) {
      word += '\'';  // U+2019
      i += 2;
    } else {
      flush();
    }
  }
  flush();
  return words;
}

// One form for a verb's tenses and a noun's number: "submitted", "submits" and
// "submit" -> "submit"; "scheduled" and "schedule" -> "schedul"; "notified" -> "notify".
std::string Stem(std::string_view word) {
  std::string w(word);
  if (auto it = Irregular().find(w); it != Irregular().end()) w = it->second;
  if (w.ends_with("ied") || w.ends_with("ies")) {
    w.replace(w.size() - 3, 3, "y");
  } else if (w.ends_with("ing") && w.size() > 5) {
    w.resize(w.size() - 3);
  } else if (w.ends_with("ed") && w.size() > 4) {
    w.resize(w.size() - 2);
  } else if (w.ends_with("ches") || w.ends_with("shes") || w.ends_with("sses") || w.ends_with("xes")) {
    w.resize(w.size() - 2);
  } else if (w.ends_with("s") && !w.ends_with("ss") && !w.ends_with("'s") && w.size() > 3) {
    w.pop_back();
  }
  if (w.size() >= 3 && w.back() == w[w.size() - 2] && !IsVowel(w.back())) w.pop_back();
  if (w.size() > 3 && w.back() == 'e') w.pop_back();
  return w;
}

bool IsIrregularPast(std::string_view word) { return Irregular().count(word) > 0; }

// The words of an identifier: "submit_prayer_request", "lookupWeather", "web.search".
std::vector<std::string> IdentifierWords(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool boundary = !std::isalpha(c) || (std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(name[i - 1])));
    if (boundary && !word.empty()) {
      words.push_back(word);
      word.clear();
    }
    if (std::isalpha(c)) word += static_cast<char>(std::tolower(c));
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

namespace text_detail {

size_t PlaceholderEnd(std::string_view text, size_t open) {
  auto starts = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
  auto inside = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_.-[]*$").find(c) != std::string_view::npos;
  };
  if (open + 1 >= text.size() || !starts(text[open + 1])) return std::string_view::npos;
  size_t i = open + 2;
  while (i < text.size() && inside(text[i])) ++i;
  return i < text.size() && text[i] == '}' ? i : std::string_view::npos;
}

}  // namespace text_detail

std::vector<std::string> Placeholders(std::string_view text) {
  std::vector<std::string> names;
  FillPlaceholders(text, [&names](const std::string& name) {
    names.push_back(name);
    return std::string();
  });
  return names;
}

}  // namespace reins

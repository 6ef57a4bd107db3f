#include "domain/json_text.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "domain/json_parse.h"
#include "domain/text.h"

namespace reins {
namespace {

constexpr uint64_t kEachByte = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// The high bit of each byte of `w` that is zero is set (and no other: exact, not the
// shortcut that can flag a byte after a borrow).
uint64_t ZeroBytes(uint64_t w) { return ~(((w & ~kHighBits) + ~kHighBits) | w | ~kHighBits); }

// The high bit of each byte of `w` that JSON must escape: below 0x20 (its top three
// bits zero), '"' or '\\'.
uint64_t ToEscape(uint64_t w) {
  return ZeroBytes(w & (0xE0 * kEachByte)) | ZeroBytes(w ^ ('"' * kEachByte)) | ZeroBytes(w ^ ('\\' * kEachByte));
}

// The one to seven bytes at `p` in a word, the rest spaces (which need no escape). Each
// is in it, some twice, which changes nothing for a check of every byte.
inline uint64_t ShortWord(const char* p, size_t n) {
  if (n >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, p, 4);
    std::memcpy(&tail, p + n - 4, 4);
    return head | uint64_t{tail} << 32;
  }
  const auto byte = [p](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
  return byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16 | 0x2020202020000000ULL;
}

// True when `s` can be written between quotes as it is: ASCII with nothing to escape.
// Eight bytes at a time: most of what a turn writes is such text.
[[gnu::always_inline]] inline bool IsPlainAscii(std::string_view s) {  // (inlined: called per string and per key)
  size_t i = 0;
  uint64_t w;
  for (; i + 8 <= s.size(); i += 8) {
    std::memcpy(&w, s.data() + i, 8);
    if (((w & kHighBits) | ToEscape(w)) != 0) return false;  // a byte >= 0x80 or one to escape
  }
  if (i == s.size()) return true;
  // The last one to seven bytes in one word, not one by one (most strings and keys are
  // short): the word that ends the string (bytes before them checked again), or a short
  // string's bytes padded with spaces.
  if (s.size() >= 8) {
    std::memcpy(&w, s.data() + s.size() - 8, 8);
  } else {
    w = ShortWord(s.data(), s.size());
  }
  return ((w & kHighBits) | ToEscape(w)) == 0;
}

// Where the next byte that must be escaped (below 0x20, '"' or '\\') is, from `from`;
// the size of `s` if there is none. Eight bytes at a time.
size_t NextToEscape(std::string_view s, size_t from) {
  size_t i = from;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    static_assert(std::endian::native == std::endian::little, "the first byte in memory is the lowest");
    if (const uint64_t special = ToEscape(w); special != 0) return i + static_cast<size_t>(std::countr_zero(special)) / 8;
  }
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\') return i;
  }
  return s.size();
}

void AppendEscaped(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\b': out += "\\b"; return;
    case '\t': out += "\\t"; return;
    case '\n': out += "\\n"; return;
    case '\f': out += "\\f"; return;
    case '\r': out += "\\r"; return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";  // the library's lower case
      const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.append(u, sizeof u);
    }
  }
}

// `s` between quotes, then `after` unless it is NUL (a member name's colon), in one
// append: most of what a turn writes is short plain text, where three appends cost more
// than the copy.
void AppendQuoted(std::string& out, std::string_view s, char after = '\0') {
  const size_t at = out.size();
  out.resize(at + s.size() + (after != '\0' ? 3 : 2));
  char* p = out.data() + at;
  p[0] = '"';
  std::memcpy(p + 1, s.data(), s.size());
  p[s.size() + 1] = '"';
  if (after != '\0') p[s.size() + 2] = after;
}

void AppendString(std::string& out, std::string_view s) {
  if (IsPlainAscii(s)) {
    AppendQuoted(out, s);
    return;
  }
  if (!IsWellFormedUtf8(s)) {
    // Invalid sequences replaced the library's way (where a sequence ends, what is
    // retried): rare, so its own serializer rather than a copy of its rules.
    out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  // Escapes (tool arguments and results are JSON text, full of quotes); the bytes of
  // multi-byte characters are all >= 0x80 and go out unchanged.
  out += '"';
  size_t run = 0;
  for (size_t i = NextToEscape(s, 0); i < s.size(); i = NextToEscape(s, run)) {
    out.append(s.data() + run, i - run);
    AppendEscaped(out, static_cast<unsigned char>(s[i]));
    run = i + 1;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) { AppendString(out, s); }

bool IsPlainJsonAscii(std::string_view s) { return IsPlainAscii(s); }

void AppendJsonKey(std::string& out, std::string_view key) {
  if (IsPlainAscii(key)) {  // the keys reins writes
    AppendQuoted(out, key, ':');
    return;
  }
  AppendString(out, key);
  out += ':';
}

void AppendJsonInt(std::string& out, int64_t n) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
  out.append(digits, end);
}

void AppendJsonText(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      char buf[24];
      auto [end, ec] = value.is_number_unsigned() ? std::to_chars(buf, buf + sizeof buf, value.get<uint64_t>())
                                                  : std::to_chars(buf, buf + sizeof buf, value.get<int64_t>());
      out.append(buf, end);
      return;
    }
    case Json::value_t::string: AppendString(out, value.get_ref<const std::string&>()); return;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& item : value.get_ref<const Json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        AppendJsonText(out, item);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.get_ref<const Json::object_t&>()) {  // no iteration proxies
        if (!first) out += ',';
        first = false;
        AppendString(out, key);
        out += ':';
        AppendJsonText(out, item);
      }
      out += '}';
      return;
    }
    default:  // floats and binary: the library's formatting
      out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
  }
}

namespace {

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i;
}

// `s[i]` opens a string: where it ends, past its closing quote.
size_t SkipString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') ++i;
    else if (s[i] == '"') return i + 1;
  }
  return s.size();
}

// `s[i]` begins a value: where it ends.
size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return i;
  if (s[i] == '"') return SkipString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = SkipString(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return i;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' &&
         s[i] != '\t') {
    ++i;  // a number, true, false or null
  }
  return i;
}

}  // namespace

std::optional<std::string_view> MemberText(std::string_view object, std::string_view key) {
  size_t i = SkipSpace(object, 0);
  if (i >= object.size() || object[i] != '{') return std::nullopt;
  i = SkipSpace(object, i + 1);
  while (i < object.size() && object[i] == '"') {
    const size_t name_end = SkipString(object, i);
    const std::string_view name = object.substr(i + 1, name_end - i - 2);
    i = SkipSpace(object, name_end);
    if (i >= object.size() || object[i] != ':') return std::nullopt;
    i = SkipSpace(object, i + 1);
    const size_t value_end = SkipValue(object, i);
    if (name == key) return object.substr(i, value_end - i);
    i = SkipSpace(object, value_end);
    if (i >= object.size() || object[i] != ',') break;
    i = SkipSpace(object, i + 1);
  }
  return std::nullopt;
}

std::optional<std::string_view> UnescapedString(std::string_view json_text) {
  if (json_text.size() < 2 || json_text.front() != '"') return std::nullopt;
  const std::string_view inner = json_text.substr(1, json_text.size() - 2);
  if (inner.find('\\') != std::string_view::npos) return std::nullopt;
  return inner;
}

std::optional<std::string> MemberString(std::string_view object, std::string_view key) {
  const std::optional<std::string_view> value = MemberText(object, key);
  if (!value) return std::nullopt;
  if (std::optional<std::string_view> plain = UnescapedString(*value)) return std::string(*plain);
  const Json text = ParseJsonOrDiscarded(*value);  // escapes: rare in what reins reads this way
  if (!text.is_string()) return std::nullopt;
  return text.get<std::string>();
}

std::optional<int64_t> MemberInt(std::string_view object, std::string_view key) {
  const std::optional<std::string_view> value = MemberText(object, key);
  if (!value) return std::nullopt;
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size()) return std::nullopt;
  return n;
}

std::string& EventTextBuffer() {
  thread_local std::string buffer;
  buffer.clear();
  return buffer;
}

std::string JsonText(const Json& value) {
  std::string out;
  out.reserve(256);
  AppendJsonText(out, value);
  return out;
}

}  // namespace reins

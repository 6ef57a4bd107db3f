#include "domain/json_text.h"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace reins {
namespace {

constexpr uint64_t kEachByte = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// The high bit of each byte of `w` that is zero is set (and no other: exact, not the
// shortcut that can flag a byte after a borrow).
uint64_t ZeroBytes(uint64_t w) { return ~(((w & ~kHighBits) + ~kHighBits) | w | ~kHighBits); }

// True when `s` can be written between quotes as it is: ASCII with nothing to escape.
// Eight bytes at a time: most of what a turn writes is such text.
bool IsPlainAscii(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    // A byte >= 0x80, or < 0x20 (its top three bits zero), or '"', or '\\'.
    const uint64_t special = (w & kHighBits) | ZeroBytes(w & (0xE0 * kEachByte)) | ZeroBytes(w ^ ('"' * kEachByte)) |
                             ZeroBytes(w ^ ('\\' * kEachByte));
    if (special != 0) return false;
  }
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') return false;
  }
  return true;
}

// True when `s` is well-formed UTF-8 (Unicode's table 3-7: no overlong forms, no
// surrogates, nothing past U+10FFFF), the sequences the library copies unchanged.
bool IsWellFormedUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  auto in = [](unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; };
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    const ptrdiff_t left = end - p;
    if (in(c, 0xC2, 0xDF)) {
      if (left < 2 || !in(p[1], 0x80, 0xBF)) return false;
      p += 2;
    } else if (in(c, 0xE0, 0xEF)) {
      const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      if (left < 3 || !in(p[1], lo, hi) || !in(p[2], 0x80, 0xBF)) return false;
      p += 3;
    } else if (in(c, 0xF0, 0xF4)) {
      const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      if (left < 4 || !in(p[1], lo, hi) || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF)) return false;
      p += 4;
    } else {
      return false;
    }
  }
  return true;
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

void AppendString(std::string& out, std::string_view s) {
  if (IsPlainAscii(s)) {
    out += '"';
    out += s;
    out += '"';
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
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    AppendEscaped(out, c);
    run = i + 1;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) { AppendString(out, s); }

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

void JsonObjectText::Int(std::string_view key, int64_t value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  Key(key).append(buf, end);
}

std::string JsonText(const Json& value) {
  std::string out;
  out.reserve(256);
  AppendJsonText(out, value);
  return out;
}

}  // namespace reins

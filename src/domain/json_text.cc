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

void AppendString(std::string& out, std::string_view s) {
  if (IsPlainAscii(s)) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  // Escapes and UTF-8 (validated, invalid sequences replaced): the library's rules.
  out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
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

std::string JsonText(const Json& value) {
  std::string out;
  out.reserve(256);
  AppendJsonText(out, value);
  return out;
}

}  // namespace reins

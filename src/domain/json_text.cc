#include "domain/json_text.h"

#include <charconv>

namespace reins {
namespace {

// True when `s` can be written between quotes as it is: ASCII with nothing to escape.
bool IsPlainAscii(std::string_view s) {
  for (unsigned char c : s) {
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

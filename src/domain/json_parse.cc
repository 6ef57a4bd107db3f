#include "domain/json_parse.h"

#include <cerrno>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// The reader copies strings sixteen bytes at a time from a StringStream (every x86-64
// has SSE2); byte by byte, strings were most of the cost of reading a model's answer.
#define RAPIDJSON_SSE2
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include "domain/text.h"

namespace reins {
namespace {

// RapidJSON's reader drives the building of an nlohmann DOM: its lexer is several times
// faster than nlohmann's (which was the largest single cost of reading a model's
// answer), and the value built is the one nlohmann's own parser would build:
// non-negative integers unsigned, negative ones signed, others double (read by strtod,
// as nlohmann does), the last of two equal keys kept. tests/core/json_parse_test.cc
// holds the two side by side. One difference is deliberate: nlohmann takes a NUL byte
// for the end of the text ("[1]\0x" is [1]); here a NUL byte anywhere is an error, as
// JSON text cannot contain one.
class DomBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, DomBuilder> {
 public:
  DomBuilder(Json& root, int max_depth, const JsonShape* shape) : root_(root), max_depth_(max_depth), root_shape_(shape) {}

  bool Null() { return Add(Json(nullptr)); }
  bool Bool(bool b) { return Add(Json(b)); }
  // Numbers arrive as their text (NUL-terminated) and are read the way nlohmann reads
  // them: RapidJSON 1.1's full-precision path gets some integers past 2^64 wrong.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    const bool integral = std::strpbrk(s, ".eE") == nullptr;
    // A number the shape leaves out is only checked, and an integer of fewer than 300
    // digits is finite whatever it is (a model's answer has a dozen such counts).
    if (integral && n < 300 && !Builds()) return true;
    char* end = nullptr;
    errno = 0;
    if (integral && s[0] == '-') {
      long long i = std::strtoll(s, &end, 10);
      if (errno == 0 && end == s + n) return Add(Json(static_cast<int64_t>(i)));
    } else if (integral) {
      unsigned long long u = std::strtoull(s, &end, 10);
      if (errno == 0 && end == s + n) return Add(Json(static_cast<uint64_t>(u)));
    }
    const double d = strtod_l(s, &end, CLocale());  // an integer too large for 64 bits too
    if (!std::isfinite(d)) return Fail("number overflow parsing '" + std::string(s, n) + "'");
    return Add(Json(d));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!IsUtf8(s, n)) return Fail(kNotUtf8);
    if (Builds()) Place(Json(std::string(s, n)));  // a string left out is never copied
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (!IsUtf8(s, n)) return Fail(kNotUtf8);
    if (skip_depth_ > 0) return true;
    if (const JsonShape* shape = shapes_.back()) {
      const JsonShape::Member* member = shape->Find(std::string_view(s, n));
      if (member == nullptr) {
        skip_next_ = true;  // read, not built
        return true;
      }
      member_shape_ = member->shape;
    } else {
      member_shape_ = nullptr;
    }
    key_.assign(s, n);
    return true;
  }
  bool StartObject() { return Open(Json::object()); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool StartArray() { return Open(Json::array()); }
  bool EndArray(rapidjson::SizeType) { return Close(); }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  static constexpr const char* kNotUtf8 = "a string is not valid UTF-8 (or escapes an unpaired UTF-16 surrogate)";

  static locale_t CLocale() {
    static const locale_t c = newlocale(LC_ALL_MASK, "C", nullptr);
    return c;
  }
  // Strings are checked here, decoded, rather than by the reader byte by byte (its
  // validating path also gives up its faster copy). This also catches what RapidJSON
  // 1.1 lets through, a lone low surrogate escape (\udc00), which it decodes into the
  // bytes of a surrogate.
  static bool IsUtf8(const char* s, size_t n) { return IsWellFormedUtf8(std::string_view(s, n)); }
  bool Fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  // Places `value` in the container being built (or as the root); its address, for a
  // container that values go into next.
  Json* Place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<Json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    auto& fields = parent.get_ref<Json::object_t&>();
    return &fields.insert_or_assign(std::move(key_), std::move(value)).first->second;
  }
  // False when the value about to arrive is one the shape leaves out (or inside one).
  bool Builds() {
    if (skip_depth_ > 0) return false;
    return !std::exchange(skip_next_, false);
  }
  bool Add(Json&& value) {
    if (Builds()) Place(std::move(value));
    return true;
  }
  bool Open(Json&& container) {
    if (static_cast<int>(open_.size()) + skip_depth_ >= max_depth_) {
      too_deep_ = true;
      return false;  // ends the parse here: nothing deeper is built
    }
    if (skip_depth_ > 0 || skip_next_) {
      skip_next_ = false;
      ++skip_depth_;
      return true;
    }
    // The shape of what opens: the root's; an array's element has the array's own.
    const JsonShape* shape = open_.empty()            ? root_shape_
                             : open_.back()->is_array() ? shapes_.back()
                                                        : member_shape_;
    open_.push_back(Place(std::move(container)));
    shapes_.push_back(shape);
    return true;
  }
  bool Close() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    open_.pop_back();
    shapes_.pop_back();
    return true;
  }

  Json& root_;
  int max_depth_;
  const JsonShape* root_shape_;          // null: everything is built
  std::vector<Json*> open_;
  std::vector<const JsonShape*> shapes_;  // of each open container
  const JsonShape* member_shape_ = nullptr;  // of the member whose key came last
  bool skip_next_ = false;                   // the next value is left out
  int skip_depth_ = 0;                       // containers open inside one left out
  std::string key_;
  bool too_deep_ = false;
  std::string error_;  // what the builder refused; empty when the reader found the error
};

// RapidJSON refuses a number whose exponent it cannot hold even when the number is
// finite ("0e400" is 0 to strtod and to nlohmann): a text it refuses for that is read
// again by nlohmann's parser, with the same depth limit (values deeper than it are
// dropped, never built). Rare: no model or client writes such numbers.
Result<Json> ParseWithNlohmann(std::string_view text, int max_depth) {
  bool too_deep = false;
  auto bounded = [&](int depth, Json::parse_event_t event, Json&) {
    const bool opens = event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
    if (opens && depth >= max_depth) too_deep = true;
    return !too_deep;
  };
  Json out = Json::parse(text.begin(), text.end(), bounded, /*allow_exceptions=*/false);
  if (too_deep) return InvalidArgument("JSON nested deeper than " + std::to_string(max_depth) + " levels");
  if (out.is_discarded()) return InvalidArgument("invalid JSON");
  return out;
}

// Hands RapidJSON's events on to a JsonEvents, checking what DomBuilder checks: strings
// and keys UTF-8, containers no deeper than the limit.
class EventForwarder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, EventForwarder> {
 public:
  EventForwarder(JsonEvents& events, int max_depth) : events_(events), max_depth_(max_depth) {}

  bool Null() { return events_.Null(); }
  bool Bool(bool b) { return events_.Bool(b); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return events_.Number(std::string_view(s, n)); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view value(s, n);
    return IsWellFormedUtf8(value) && events_.String(value);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view key(s, n);
    return IsWellFormedUtf8(key) && events_.Key(key);
  }
  bool StartObject() { return Deeper() && events_.StartObject(); }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    return events_.EndObject();
  }
  bool StartArray() { return Deeper() && events_.StartArray(); }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return events_.EndArray();
  }

 private:
  bool Deeper() {
    if (depth_ >= max_depth_) return false;
    ++depth_;
    return true;
  }

  JsonEvents& events_;
  int max_depth_;
  int depth_ = 0;  // containers open
};

// RapidJSON reads `text` (a UTF-8 byte order mark skipped, as nlohmann's parser does)
// into `handler`, from `buffer`. A StringStream reads up to a NUL byte, and a string_view
// has none after it: the text is copied into a buffer kept for the next read (a memcpy,
// against the byte-by-byte copy of every string it saves). The caller has refused a
// NUL byte in the text (never valid JSON text; the stream would take it for the end).
// The reader loads aligned 16-byte blocks, so the block that holds the end may reach
// past it: sixteen NUL bytes make that block part of the buffer, and defined.
//
// In place (`in_situ`), strings are unescaped inside the buffer and handed over where
// they lie, instead of being copied byte by byte onto the reader's stack first (most of
// what reading a model's answer cost); each stays where it is until the buffer is used
// again. Numbers then come unterminated: only a handler that takes their length may
// read in place.
template <bool in_situ, typename Handler>
rapidjson::ParseResult ReadWith(std::string_view text, Handler& handler, std::string& buffer) {
  buffer.assign(text);
  buffer.append(16, '\0');
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag;  // UTF-8 is checked by the handler
  rapidjson::ParseResult ok;
  if constexpr (in_situ) {
    rapidjson::InsituStringStream in(buffer.data());
    ok = reader.Parse<kFlags | rapidjson::kParseInsituFlag>(in, handler);
  } else {
    rapidjson::StringStream in(buffer.c_str());
    ok = reader.Parse<kFlags>(in, handler);
  }
  constexpr size_t kKeptBuffer = 1 << 20;  // a rare large text does not stay resident
  if (buffer.capacity() > kKeptBuffer) std::string().swap(buffer);
  return ok;
}

std::string_view WithoutByteOrderMark(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

Result<Json> Parse(std::string_view text, int max_depth, const JsonShape* shape) {
  text = WithoutByteOrderMark(text);
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return InvalidArgument("invalid JSON: a NUL byte at offset " + std::to_string(nul));
  }
  thread_local std::string terminated;
  Json out;
  DomBuilder builder(out, max_depth, shape);
  rapidjson::ParseResult ok = ReadWith</*in_situ=*/false>(text, builder, terminated);
  if (builder.too_deep()) return InvalidArgument("JSON nested deeper than " + std::to_string(max_depth) + " levels");
  if (!ok && ok.Code() == rapidjson::kParseErrorNumberTooBig) return ParseWithNlohmann(text, max_depth);
  if (!ok && !builder.error().empty()) {
    return InvalidArgument("invalid JSON: " + builder.error() + " (at offset " + std::to_string(ok.Offset()) + ")");
  }
  if (!ok) {
    return InvalidArgument(std::string("invalid JSON: ") + rapidjson::GetParseError_En(ok.Code()) + " (at offset " +
                           std::to_string(ok.Offset()) + ")");
  }
  return out;
}

}  // namespace

const JsonShape::Member* JsonShape::Find(std::string_view key) const {
  for (const Member& m : members) {
    if (m.key == key) return &m;
  }
  return nullptr;
}

Result<Json> ParseJson(std::string_view text, int max_depth) { return Parse(text, max_depth, nullptr); }

Result<Json> ParseJsonShaped(std::string_view text, const JsonShape& shape, int max_depth) {
  return Parse(text, max_depth, &shape);
}

bool ReadJsonEvents(std::string_view text, JsonEvents& events, int max_depth) {
  text = WithoutByteOrderMark(text);
  if (text.find('\0') != std::string_view::npos) return false;
  thread_local std::string terminated;  // not Parse's: `events` may parse JSON while it reads
  EventForwarder forwarder(events, max_depth);
  return !ReadWith</*in_situ=*/true>(text, forwarder, terminated).IsError();
}

Json ParseJsonOrDiscarded(std::string_view text, int max_depth) {
  Result<Json> parsed = ParseJson(text, max_depth);
  if (!parsed.ok()) return Json(Json::value_t::discarded);
  return std::move(parsed).value();
}

}  // namespace reins

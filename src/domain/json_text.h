// Compact JSON text for hot paths (the store writes a few kilobytes per turn). Output
// is byte-for-byte what nlohmann::json::dump() gives with invalid UTF-8 replaced;
// strings (escaped here, only invalid UTF-8 goes to the library) and integers are
// appended directly instead of going through the library's per-character serializer,
// which dominated the per-turn commit cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reins/envelope.h"
#include "reins/json.h"
#include "reins/message.h"

namespace reins {

struct TurnResult;

// Appends the compact JSON text of `value` to `out`.
void AppendJsonText(std::string& out, const Json& value);
std::string JsonText(const Json& value);
// Appends `n` as a JSON number.
void AppendJsonInt(std::string& out, int64_t n);
// Appends `s` as a JSON string (quoted, escaped, invalid UTF-8 replaced).
void AppendJsonString(std::string& out, std::string_view s);
// Appends `key` as an object member's name and its colon: `"key":`.
void AppendJsonKey(std::string& out, std::string_view key);
// True when `s` is ASCII with nothing JSON escapes (no '"', '\\' or byte below 0x20), eight
// bytes at a time: text other formats can take as it is too (metrics label values).
bool IsPlainJsonAscii(std::string_view s);

// A JSON object written straight to text, member by member, for bodies built on every
// model call: no DOM is built, copied and destroyed just to be written out once.
//   JsonObjectText o(out); o.String("role", "user"); o.Value("n", Json(3)); o.Close();
class JsonObjectText {
 public:
  explicit JsonObjectText(std::string& out) : out_(out) { out_ += '{'; }
  // Starts member `key`; the caller appends its value's text to the string returned.
  std::string& Key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    AppendJsonKey(out_, key);
    return out_;
  }
  void String(std::string_view key, std::string_view value) { AppendJsonString(Key(key), value); }
  void Value(std::string_view key, const Json& value) { AppendJsonText(Key(key), value); }
  void Raw(std::string_view key, std::string_view json_text) { Key(key) += json_text; }
  void Int(std::string_view key, int64_t value) { AppendJsonInt(Key(key), value); }
  void Bool(std::string_view key, bool value) { Raw(key, value ? "true" : "false"); }
  void Close() { out_ += '}'; }

 private:
  std::string& out_;
  bool first_ = true;
};

// The text of member `key`'s value in `object`, a JSON object as reins writes it (valid
// JSON: an event's data, a stored row), found without parsing the rest: the other
// members' values are skipped over, not read. nullopt when `object` is not an object or
// has no such member. `key` is compared with each member's name as written, so it must
// be plain (no character JSON escapes); of two equal names, the first is found.
std::optional<std::string_view> MemberText(std::string_view object, std::string_view key);
// A string's JSON text (`"..."`, as MemberText gives it) when nothing in it is escaped:
// the view between the quotes, which is its value. nullopt for any other text.
std::optional<std::string_view> UnescapedString(std::string_view json_text);
// MemberText's value read as a string (unescaped) or an integer; nullopt when the member
// is absent or holds another type.
std::optional<std::string> MemberString(std::string_view object, std::string_view key);
std::optional<int64_t> MemberInt(std::string_view object, std::string_view key);

// A string this thread reuses to write an event's data in, emptied: an event written
// member by member (JsonObjectText) is kept by EventData::FromText, which copies it at
// its size, so the buffer's spare room is never held by a waiting turn. Hold it only
// until that copy.
std::string& EventTextBuffer();

// The TurnResultToJson text of `r`, written directly: the store keeps it and the HTTP
// API answers with it on every turn.
std::string TurnResultText(const TurnResult& r, bool with_tools);

// Appends JsonText(MessageToJson(m)) without building the DOM: the store writes every
// message of every turn.
void AppendMessageText(std::string& out, const Message& m);

// JsonText(EnvelopeToJson(e)) without building the DOM (envelope.cc): every tool call's
// result goes to the store, and into the model's history, as this text.
std::string EnvelopeText(const ResultEnvelope& e);

}  // namespace reins

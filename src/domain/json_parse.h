// ParseJson: the way reins reads JSON text that it did not write itself (HTTP bodies,
// model responses, tool results, MCP messages, tool-call arguments); ReadJsonEvents
// below, the same reading without building a value, for a reader that keeps a few fields.
//
// Nesting is limited while parsing, not after: a document deeper than `max_depth`
// stops the parser at that depth, so no deep value is ever built (serialising,
// copying or destroying one recurses once per level and overflows the stack).
// Errors are InvalidArgument with a plain sentence: "nested deeper than 128 levels"
// or the parser's message with its position. The value is the one nlohmann's parser
// builds from the same text (RapidJSON's reader lexes it, faster; json_parse.cc), except
// that a NUL byte is an error wherever it is, where nlohmann stops reading at it.
#pragma once

#include <string_view>
#include <vector>

#include "reins/json.h"
#include "reins/status.h"

namespace reins {

// Deep enough for any real payload (tool schemas cap instances at the same depth).
inline constexpr int kMaxJsonDepth = 128;
// For what reins wrote itself (its store): payloads nested inside envelopes and events.
inline constexpr int kMaxStoredJsonDepth = 512;

Result<Json> ParseJson(std::string_view text, int max_depth = kMaxJsonDepth);

// The same, for callers that only need "valid or not": a discarded value on any error.
Json ParseJsonOrDiscarded(std::string_view text, int max_depth = kMaxJsonDepth);

// The members of objects a reader needs from a large document (a model's answer, of
// which a turn reads a handful of fields): ParseJsonShaped reads and checks the whole
// text as ParseJson does, but builds only the members named. A member's `shape` applies
// to its value (an object's members, or each element of an array); null builds the whole
// value. The root's shape is the one passed.
struct JsonShape {
  struct Member {
    std::string_view key;
    const JsonShape* shape = nullptr;
  };
  std::vector<Member> members;
  const Member* Find(std::string_view key) const;
};
// ParseJson's value with the members `shape` does not name left out (rarely all of it:
// a text only nlohmann's parser reads, see json_parse.cc, comes back whole). Errors and
// the depth limit are ParseJson's.
Result<Json> ParseJsonShaped(std::string_view text, const JsonShape& shape, int max_depth = kMaxJsonDepth);

// The values of a JSON text one by one, in order, for a reader that keeps a few fields
// of a document without building a value of it (a model's answer: model/openai_wire.cc).
// Strings and keys arrive decoded and checked as UTF-8; numbers as they are written.
// Each returns false to stop reading.
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual bool Null() = 0;
  virtual bool Bool(bool value) = 0;
  virtual bool Number(std::string_view text) = 0;
  virtual bool String(std::string_view value) = 0;
  virtual bool Key(std::string_view key) = 0;
  virtual bool StartObject() = 0;
  virtual bool EndObject() = 0;
  virtual bool StartArray() = 0;
  virtual bool EndArray() = 0;
};
// True when `text` is a JSON text ParseJson reads as it is (no NUL byte, UTF-8, nested no
// deeper than `max_depth`, every number one RapidJSON holds) and `events` took all of it.
// False says nothing more: a reader that must explain why calls ParseJson.
bool ReadJsonEvents(std::string_view text, JsonEvents& events, int max_depth = kMaxJsonDepth);

}  // namespace reins

// Server-Sent Events: an incremental parser for `text/event-stream` bodies. Bytes
// arrive in arbitrary pieces (a chunk may end inside a line, inside a UTF-8 sequence,
// between "\r" and "\n"); the parser buffers until a blank line completes an event.
// Used by the model providers (OpenAI `data:` chunks, Anthropic `event:` + `data:`)
// and by the MCP Streamable HTTP transport.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace reins {

struct SseEvent {
  std::string event;  // "" when the stream named none ("message" by default)
  std::string data;   // `data:` lines joined with "\n"
  std::string id;
};

class SseParser {
 public:
  using Sink = std::function<void(SseEvent&&)>;
  // Feeds the next bytes; calls `sink` once per completed event, in order.
  void Feed(std::string_view bytes, const Sink& sink);
  // Bytes held back waiting for the end of a line or event (for size caps).
  size_t buffered() const { return line_.size() + pending_.data.size(); }

 private:
  void Line(std::string_view line, const Sink& sink);
  std::string line_;
  bool after_cr_ = false;
  bool has_data_ = false;
  SseEvent pending_;
};

}  // namespace reins

#include "net/sse.h"

namespace reins {

void SseParser::Feed(std::string_view bytes, const Sink& sink) {
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // "\r\n" is one line ending
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      std::string line = std::move(line_);
      line_.clear();
      Line(line, sink);
      continue;
    }
    line_.push_back(c);
  }
}

void SseParser::Line(std::string_view line, const Sink& sink) {
  if (line.empty()) {  // a blank line dispatches the event, if it has data
    if (has_data_) sink(std::move(pending_));
    pending_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment (heartbeat)
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event.assign(value);
  } else if (field == "id") {
    pending_.id.assign(value);
  }  // "retry" and unknown fields are ignored
}

}  // namespace reins

// HistoryText: the request text a wire format wrote for a session's earlier messages,
// kept with the session so that each model call writes only what is new.
//
// Every model call of a session carries its whole history, and the messages of earlier
// turns are written the same way in every call: rewriting them cost a turn about 4.6 µs
// per earlier turn on the peer job (docs/PERFORMANCE.md, round 30), where the text of a
// new message costs its copy. A session's SessionHistory (turn/session_history.h) owns
// one beside its messages (made by its first call with earlier turns to reuse) and
// changes both together, so the text never differs from the messages it stands for; a
// wire format (OpenAI's) reads and extends it while it writes a request.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace reins {

struct HistoryText {
  // Who wrote the text and how: a wire format's own tag, and whether user messages were
  // labelled with their speakers. Another writer or labelling starts it again.
  const void* writer = nullptr;
  bool labelled = false;
  std::string text;          // the first messages' JSON text, comma-separated
  std::vector<size_t> ends;  // where each message's text ends in `text`

  size_t messages() const { return ends.size(); }
  // Message `i` of the history was written to `text` (after the comma it needs).
  void Ended() { ends.push_back(text.size()); }
  // Only the first `n` messages' text is kept (message `n` changed, or the history was
  // cut back to `n` messages).
  void Truncate(size_t n);
  // The history's first `n` messages were dropped (what a model call can no longer see).
  void DropFront(size_t n);
};

}  // namespace reins

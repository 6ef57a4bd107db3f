// SessionHistory: a session's messages and the request text kept for them (HistoryText,
// domain/history_text.h), changed only together.
//
// A wire format writes the text of a session's earlier messages once and reuses it in
// every later call of the session; that is only right while the text stands for the
// messages as they are. So every change goes through here: a message appended, one
// edited in place (its text and what follows is written again), the history cut back
// (a turn rolled back) or its front dropped (what no model call can still see).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "domain/history_text.h"
#include "reins/message.h"

namespace reins {

class SessionHistory {
 public:
  const std::vector<Message>& messages() const { return messages_; }
  size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }

  Message& Append(Message m) { return messages_.emplace_back(std::move(m)); }
  // Message `i`, to change in place: its request text is written again at the next call.
  Message& Edit(size_t i);
  // Keeps the first `n` messages (a turn that is rolled back).
  void Truncate(size_t n);
  // Drops the first `n` messages (those no model call can see any more).
  void DropFront(size_t n);
  // Puts `older` in front, as a session read from the store a page at a time grows.
  void Prepend(std::vector<Message> older);

  // The messages themselves, lent to a model call's request that gives them back as they
  // were (CallRequest::Borrow): the kept text still stands for them.
  std::vector<Message>& Lend() { return messages_; }
  // The kept request text, made by the first call that can reuse it (8 bytes a session
  // until then).
  HistoryText& Text();

 private:
  std::vector<Message> messages_;
  std::unique_ptr<HistoryText> text_;
};

}  // namespace reins

#include "turn/session_history.h"

#include <algorithm>
#include <iterator>

namespace reins {

Message& SessionHistory::Edit(size_t i) {
  if (text_) text_->Truncate(i);
  return messages_[i];
}

void SessionHistory::Truncate(size_t n) {
  if (n >= messages_.size()) return;
  messages_.resize(n);
  if (text_) text_->Truncate(n);
}

void SessionHistory::DropFront(size_t n) {
  if (n == 0) return;
  messages_.erase(messages_.begin(), messages_.begin() + static_cast<std::ptrdiff_t>(std::min(n, messages_.size())));
  if (text_) text_->DropFront(n);
}

void SessionHistory::Prepend(std::vector<Message> older) {
  if (older.empty()) return;
  older.insert(older.end(), std::make_move_iterator(messages_.begin()), std::make_move_iterator(messages_.end()));
  messages_ = std::move(older);
  text_.reset();  // every message moved: none of the kept text is where it was
}

HistoryText& SessionHistory::Text() {
  if (!text_) text_ = std::make_unique<HistoryText>();
  return *text_;
}

}  // namespace reins

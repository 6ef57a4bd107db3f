#include "pipeline/call_request.h"

#include <algorithm>
#include <utility>

namespace reins {

CallRequest::CallRequest(CallRequest&& other) noexcept
    : request(std::move(other.request)), lender_(std::exchange(other.lender_, nullptr)), lent_(other.lent_) {}

void CallRequest::Borrow(std::vector<Message>& history, Message system) {
  GiveBack();
  // Room for the system prompt first, while the history is still its owner's: what
  // follows moves and cannot fail. Grown as push_back would grow it, so that a history
  // lent on every call does not reallocate on every call.
  if (history.size() == history.capacity()) history.reserve(std::max<size_t>(4, 2 * history.size()));
  request.messages = std::move(history);
  history.clear();  // moved from: empty, said here rather than assumed
  request.messages.insert(request.messages.begin(), std::move(system));
  lender_ = &history;
  lent_ = request.messages.size() - 1;
}

void CallRequest::GiveBack() noexcept {
  if (lender_ == nullptr) return;
  std::vector<Message>& messages = request.messages;
  // [system prompt, the lent history..., what the call added after it]. Nothing takes
  // a message away: a provider gets the request const.
  messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(1 + lent_), messages.end());
  messages.erase(messages.begin());
  *lender_ = std::move(messages);
  messages.clear();
  lender_ = nullptr;
}

}  // namespace reins

#include "pipeline/session_queue.h"

#include <boost/asio/this_coro.hpp>

#include "net/no_throw.h"

namespace reins {

Task<void> SessionQueue::Acquire(const std::string& session_id) {
  Line& line = lines_.try_emplace(session_id).first->second;
  if (!line.busy) {
    line.busy = true;
    co_return;
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(co_await boost::asio::this_coro::executor,
                                                           boost::asio::steady_timer::time_point::max());
  line.waiting.push_back({timer, session_id});
  // Release() cancels the timer of the next waiter in line: that is the wake-up.
  auto wait = timer->async_wait(kNoThrow);
  co_await std::move(wait);
}

void SessionQueue::Release(const std::string& session_id) {
  auto it = lines_.find(session_id);
  if (it == lines_.end()) return;
  Line& line = it->second;
  if (line.waiting.empty()) {
    lines_.erase(it);  // an idle session costs nothing here
    return;
  }
  Waiter next = std::move(line.waiting.front());
  line.waiting.pop_front();
  // The key may view the id of the turn now leaving: from here it views the line's own.
  auto node = lines_.extract(it);
  node.mapped().passed_id = std::make_unique<std::string>(std::move(next.session_id));
  node.key() = *node.mapped().passed_id;
  lines_.insert(std::move(node));
  next.timer->cancel();  // ownership passes straight to the next turn; busy stays true
}

}  // namespace reins

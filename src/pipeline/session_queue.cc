#include "pipeline/session_queue.h"

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "net/no_throw.h"

namespace reins {

Task<void> SessionQueue::Acquire(const std::string& session_id) {
  auto executor = co_await boost::asio::this_coro::executor;
  std::shared_ptr<boost::asio::steady_timer> timer;
  {
    std::lock_guard lock(mu_);
    Line& line = lines_.try_emplace(session_id).first->second;
    if (!line.busy) {
      line.busy = true;
      co_return;
    }
    timer = std::make_shared<boost::asio::steady_timer>(executor, boost::asio::steady_timer::time_point::max());
    line.waiting.push_back({timer, session_id});
  }
  // Release() cancels the timer of the next waiter in line: that is the wake-up. A
  // cancel that comes before the wait starts still ends it (it runs on the timer's
  // executor, after this coroutine has suspended in the wait: see Release).
  auto wait = timer->async_wait(kNoThrow);
  co_await std::move(wait);
}

void SessionQueue::Release(const std::string& session_id) {
  std::shared_ptr<boost::asio::steady_timer> next_timer;
  {
    std::lock_guard lock(mu_);
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
    next_timer = std::move(next.timer);
  }
  // Ownership passes straight to the next turn (busy stays true). The timer is its
  // executor's to touch: the cancel is posted there, so it also comes after the
  // waiter, on that strand, has started its wait.
  boost::asio::post(next_timer->get_executor(), [next_timer] { next_timer->cancel(); });
}

}  // namespace reins

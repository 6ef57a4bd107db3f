#include "pipeline/session_cache.h"

#include <algorithm>

#include "pipeline/context_window.h"

namespace reins {

void CachedSession::Trim(size_t max_context_chars) {
  if (size_t start = ReachableStart(history.messages(), max_context_chars); start > 0) {
    history.DropFront(start);
    older_left_out = true;
  }
}

Result<std::shared_ptr<CachedSession>> CachedSession::Read(Store& store, const std::string& session_id,
                                                           size_t max_chars) {
  REINS_ASSIGN_OR_RETURN(SessionRecord record, store.LoadSession(session_id));
  auto cached = std::make_shared<CachedSession>();
  cached->state = SessionState::FromJson(record.state);
  cached->turn_count = record.turn_count;
  // Newest turns first, until older ones can no longer reach a model call.
  constexpr int kPageTurns = 32;
  for (int end = record.turn_count; end > 0;) {
    const int after = std::max(0, end - kPageTurns);
    REINS_ASSIGN_OR_RETURN(std::vector<Message> page, store.LoadMessages(session_id, TurnRange{after, end - after}));
    cached->history.Prepend(std::move(page));
    end = after;
    if (end > 0 && ReachableStart(cached->history.messages(), max_chars) > 0) {
      cached->older_left_out = true;
      break;
    }
  }
  cached->Trim(max_chars);
  return cached;
}

std::shared_ptr<CachedSession> SessionCache::Touch(const std::string& session_id) {
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return nullptr;
  lru_.splice(lru_.end(), lru_, it->second);
  return it->second->second;
}

void SessionCache::Forget(const std::string& session_id) {
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return;
  lru_.erase(it->second);
  sessions_.erase(it);
}

std::shared_ptr<CachedSession> SessionCache::Find(const std::string& session_id) {
  std::lock_guard lock(mu_);
  if (!unwritten_.empty()) {
    if (auto it = unwritten_.find(session_id); it != unwritten_.end()) return it->second;
  }
  std::shared_ptr<CachedSession> cached = Touch(session_id);
  if (cached == nullptr || !cached->unsettled) return cached;
  Forget(session_id);
  return nullptr;
}

std::shared_ptr<CachedSession> SessionCache::Remember(const std::string& session_id,
                                                      std::shared_ptr<CachedSession> session) {
  std::lock_guard lock(mu_);
  if (auto known = Touch(session_id)) return known;
  auto entry = lru_.insert(lru_.end(), {session_id, std::move(session)});
  sessions_.emplace(entry->first, entry);
  while (lru_.size() > capacity_) {
    sessions_.erase(lru_.front().first);
    lru_.pop_front();
  }
  return lru_.back().second;
}

void SessionCache::ForgetIfStale(const std::string& session_id, int turn_count) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session_id);
  if (it != sessions_.end() && it->second->second->turn_count != turn_count) Forget(session_id);
}

void SessionCache::HoldUnwritten(const std::string& session_id, std::shared_ptr<CachedSession> session) {
  std::lock_guard lock(mu_);
  unwritten_.emplace(session_id, std::move(session));
}

void SessionCache::Settle(const std::string& session_id) {
  std::lock_guard lock(mu_);
  if (!unwritten_.empty()) unwritten_.erase(session_id);
}

void SessionCache::MayHaveNotices(const std::string& session_id) {
  std::lock_guard lock(mu_);
  if (auto it = sessions_.find(session_id); it != sessions_.end()) it->second->second->may_have_notices = true;
}

size_t SessionCache::size() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace reins

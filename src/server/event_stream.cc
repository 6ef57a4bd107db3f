#include "server/event_stream.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <boost/asio/post.hpp>

#include "net/no_throw.h"
#include "reins/json.h"

namespace reins {
namespace {

namespace asio = boost::asio;

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json ToolFinished(const TraceEvent& e, const char* status) {
  Json d = e.data.is_object() ? e.data.json() : Json::object();
  d["status"] = status;
  return d;
}

}  // namespace

EventStream::EventStream(asio::any_io_executor connection) : wake_(std::move(connection)) {}

void EventStream::PushTurnEvent(const TraceEvent& e) {
  switch (e.type) {
    case EventType::kTurnStarted:
    case EventType::kModelCall:
    case EventType::kClarification:
    case EventType::kLeaseOpened:
    case EventType::kLeaseReleased:
    case EventType::kApproval:  // {id, tool, args, reason, prompt, provenance?}, once the pause is committed
      Push(std::string(e.name()), std::string(e.data.text()));
      break;
    case EventType::kToolExecuted:
      Push("tool.finished", Dump(ToolFinished(e, "executed")));
      break;
    case EventType::kToolRejected:
      Push("tool.finished", Dump(ToolFinished(e, "rejected")));
      break;
    case EventType::kToolSkipped:
      Push("tool.finished", Dump(ToolFinished(e, "skipped")));
      break;
    case EventType::kToolDeferred:
      Push("tool.finished", Dump(ToolFinished(e, "deferred")));
      break;
    case EventType::kReplyDelta:  // a streamed reply's sentences, as the rails passed them
      Push("reply.delta", std::string(e.data.text()));
      break;
    case EventType::kReplyFinal: {
      // What the person does not have yet goes as one last delta: all of a reply that
      // was held, what the turn appended to a streamed one (a correction, a question).
      const Json d = e.data.json();
      const std::string text = d.value("text", "");
      const size_t streamed = std::min<size_t>(d.value("streamed", size_t{0}), text.size());
      if (streamed < text.size()) Push("reply.delta", Dump(Json{{"text", text.substr(streamed)}}));
      Push("reply.final", Dump(Json{{"text", text}}));
      break;
    }
    case EventType::kDeferredExecuted:
      Push("deferred.finished", std::string(e.data.text()));
      break;
    case EventType::kDeferredNote: {
      // A deferred write failed after the reply streamed: its note, as a notice; the
      // turn.completed that follows carries the reply with it.
      Json notes = e.data.value("text", Json::array());
      for (const Json& note : notes) Push("notice", Dump(Json{{"text", note}}));
      break;
    }
    case EventType::kNoticeCreated:
      Push("notice", std::string(e.data.text()));
      break;
    default:
      break;  // the rest stays in the trace (GET .../trace)
  }
}

void EventStream::PushSessionEvent(const TraceEvent& e) {
  Json d = e.data.is_object() ? e.data.json() : Json::object();
  d["turn"] = e.turn;
  switch (e.type) {
    case EventType::kNoticeCreated:
      Push("notice", Dump(d));
      break;
    case EventType::kDeferredExecuted:
      Push("deferred.finished", Dump(d));
      break;
    case EventType::kLeaseOpened:
    case EventType::kLeaseReleased:
    case EventType::kTurnCompleted:
    case EventType::kClarification:
    case EventType::kApproval:
      Push(std::string(e.name()), Dump(d));
      break;
    default:
      break;
  }
}

void EventStream::Push(std::string event, std::string data) {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    queue_.emplace_back(std::move(event), std::move(data));
  }
  // Wakes Pump on its own strand (see Pump for why no wake is lost).
  asio::post(wake_.get_executor(), [self = shared_from_this()] { self->wake_.cancel(); });
}

void EventStream::Finish() {
  {
    std::lock_guard lock(mu_);
    finished_ = true;
  }
  asio::post(wake_.get_executor(), [self = shared_from_this()] { self->wake_.cancel(); });
}

Task<bool> EventStream::Started() {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) co_return true;
      if (finished_) co_return false;
    }
    wake_.expires_at(std::chrono::steady_clock::time_point::max());
    auto wait = wake_.async_wait(kNoThrow);
    co_await std::move(wait);
  }
}

// Pump looks at the queue right before every wait, in the same handler, so a wake
// posted by Push or Finish either finds the wait or is seen by the look. Anything that
// suspends (a write, a heartbeat) is followed by another look: a wake that ran while
// the write was out cancelled nothing.
Task<bool> EventStream::Pump(ServerResponse& res, int heartbeat_ms) {
  auto last_write = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<std::pair<std::string, std::string>> batch;
    bool finished;
    {
      std::lock_guard lock(mu_);
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
      finished = finished_;
    }
    if (!batch.empty()) {
      for (const auto& [event, data] : batch) {
        if (!(co_await res.Send(event, data)).ok()) co_return false;
      }
      last_write = std::chrono::steady_clock::now();
      continue;
    }
    if (finished) co_return true;
    if (std::chrono::steady_clock::now() - last_write >= std::chrono::milliseconds(heartbeat_ms)) {
      if (!(co_await res.Heartbeat()).ok()) co_return false;
      last_write = std::chrono::steady_clock::now();
      continue;
    }
    wake_.expires_at(last_write + std::chrono::milliseconds(heartbeat_ms));
    auto wait = wake_.async_wait(kNoThrow);
    co_await std::move(wait);
  }
}

}  // namespace reins

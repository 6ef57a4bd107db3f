// GET .../trace (the stored turns, whole or a page), GET .../timeline (the same turns as
// timelines, domain/timeline.h) and GET .../events (the session's durable events as they
// happen). Traces are read on the reader thread, never on the runtime strand.
#include <boost/asio/this_coro.hpp>

#include "server/api_impl.h"
#include "server/stored_turn_json.h"

namespace reins {
namespace {

constexpr int kTracePageTurns = 100;  // turns read per store call when streaming a whole trace

Result<TracePage> RenderPage(const SessionView& view, const std::string& id, TurnRange range, TraceForm form) {
  REINS_ASSIGN_OR_RETURN(const StoredTrace trace, view.Trace(id, range));
  TracePage page;
  for (const StoredTurn& t : trace.turns) {
    page.turns.push_back(Dump(form == TraceForm::kTimeline ? TimelineTurnJson(t) : TraceTurnJson(t, trace.invocations)));
    page.last_number = t.turn_number;
  }
  return page;
}

std::string TraceOpening(const std::string& id) { return "{\"session_id\":" + Dump(Json(id)) + ",\"turns\":["; }

}  // namespace

Task<Result<TracePage>> Api::Impl::ReadPage(std::string id, TurnRange range, TraceForm form) {
  const SessionView& view = sessions;
  std::function<Result<TracePage>()> read = [&view, id, range, form] { return RenderPage(view, id, range, form); };
  co_return co_await OnSync<Result<TracePage>>(readers.get_executor(), std::move(read));
}

Task<void> Api::Impl::GetTrace(Exchange x) { co_await SendTrace(x, TraceForm::kEvents); }

Task<void> Api::Impl::GetTimeline(Exchange x) { co_await SendTrace(x, TraceForm::kTimeline); }

Task<void> Api::Impl::SendTrace(Exchange x, TraceForm form) {
  TraceQuery query;
  if (auto bad = ParseTraceQuery(x.req.query, &query)) co_return co_await SendError(x.res, *bad);
  if (!query.paged) co_return co_await StreamTrace(x.res, x.session_id, form);
  Result<TracePage> page = co_await ReadPage(x.session_id, TurnRange{query.after, query.limit}, form);
  if (!page.ok()) co_return co_await SendError(x.res, FromStatus(page.status()));
  std::string body = TraceOpening(x.session_id);
  for (size_t i = 0; i < page->turns.size(); ++i) body += (i > 0 ? "," : "") + page->turns[i];
  body += "]";
  if (static_cast<int>(page->turns.size()) == query.limit) body += ",\"next_after\":" + std::to_string(page->last_number);
  body += "}";
  std::string type = kJsonType;
  co_await x.res.Respond(200, std::move(type), std::move(body));
}

// Every turn, as the contract says, but written page by page as it is read: memory
// stays at one page whatever the session's length, and the store is free between pages.
Task<void> Api::Impl::StreamTrace(ServerResponse& res, std::string id, TraceForm form) {
  Result<TracePage> page = co_await ReadPage(id, TurnRange{0, kTracePageTurns}, form);
  if (!page.ok()) co_return co_await SendError(res, FromStatus(page.status()));
  std::string type = kJsonType;
  if (!(co_await res.StartBody(std::move(type))).ok()) co_return;
  std::string chunk = TraceOpening(id);
  bool first = true;
  while (true) {
    for (std::string& turn : page->turns) {
      chunk += (first ? "" : ",") + std::move(turn);
      first = false;
    }
    if (!(co_await res.SendChunk(std::move(chunk))).ok()) co_return;
    chunk.clear();
    if (static_cast<int>(page->turns.size()) < kTracePageTurns) break;
    page = co_await ReadPage(id, TurnRange{page->last_number, kTracePageTurns}, form);
    if (!page.ok()) {
      // The status line is gone: end the document so that it still parses, saying why.
      chunk = "],\"error\":" + Dump(ErrorJson(FromStatus(page.status()))["error"]) + "}";
      if ((co_await res.SendChunk(std::move(chunk))).ok()) (void)co_await res.EndBody();
      co_return;
    }
  }
  chunk = "]}";
  if ((co_await res.SendChunk(std::move(chunk))).ok()) (void)co_await res.EndBody();
}

Task<void> Api::Impl::StreamEvents(Exchange x) {
  auto stream = std::make_shared<EventStream>(co_await boost::asio::this_coro::executor);
  const std::string id = x.session_id;
  {
    std::lock_guard lock(mu);
    subscribers[id].push_back(stream);
  }
  if ((co_await x.res.StartStream()).ok()) (void)co_await stream->Pump(x.res, options.heartbeat_ms);
  std::lock_guard lock(mu);
  auto& list = subscribers[id];
  std::erase_if(list, [&](const std::weak_ptr<EventStream>& w) { return w.expired() || w.lock() == stream; });
  if (list.empty()) subscribers.erase(id);
}

}  // namespace reins

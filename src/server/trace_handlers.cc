// GET .../trace (the stored turns, whole or a page), GET .../timeline (the same turns as
// timelines, domain/timeline.h) and GET .../events (the session's durable events as they
// happen). Traces are read on the reader thread, never on a strand of turns, a page
// of at most kPageBytes at a time, and a tenant has --max-trace-reads of them at once.
#include <algorithm>

#include <boost/asio/this_coro.hpp>

#include "server/api_impl.h"
#include "server/stored_turn_json.h"

namespace reins {
namespace {

constexpr int kTracePageTurns = 100;  // turns at most per page when streaming a whole trace
constexpr int kFirstReadTurns = 16;   // turns of a page's first store call
// Rendered bytes after which a page ends (it holds one turn at least). A page is what
// one read holds in memory until the socket takes it: bounded by bytes, not only by
// turns, a session of huge turns costs each reader about this much, not its whole trace.
constexpr size_t kPageBytes = 1 << 20;

// The turns after `range.after`, up to `range.limit` of them or kPageBytes of JSON. They
// are read a few at a time, as many per store call as the turns read so far say will
// fit, so that no store call loads more than about a page either.
Result<TracePage> RenderPage(const SessionView& view, const std::string& id, TurnRange range, TraceForm form) {
  TracePage page;
  page.last_number = range.after;
  size_t bytes = 0;
  int step = std::min(range.limit, kFirstReadTurns);
  while (true) {
    const int want = std::min(step, range.limit - static_cast<int>(page.turns.size()));
    REINS_ASSIGN_OR_RETURN(const StoredTrace trace, view.Trace(id, TurnRange{page.last_number, want}));
    for (const StoredTurn& t : trace.turns) {
      page.turns.push_back(Dump(form == TraceForm::kTimeline ? TimelineTurnJson(t) : TraceTurnJson(t, trace.invocations)));
      bytes += page.turns.back().size();
      page.last_number = t.turn_number;
      if (bytes >= kPageBytes) {
        page.more = true;
        return page;
      }
    }
    if (static_cast<int>(trace.turns.size()) < want) return page;  // the session's last turn
    if (static_cast<int>(page.turns.size()) == range.limit) {
      page.more = true;
      return page;
    }
    const size_t per_turn = bytes / page.turns.size() + 1;
    step = static_cast<int>(std::clamp<size_t>((kPageBytes - bytes) / per_turn + 1, 1, kTracePageTurns));
  }
}

std::string TraceOpening(const std::string& id) { return "{\"session_id\":" + Dump(Json(id)) + ",\"turns\":["; }

}  // namespace

std::optional<std::shared_ptr<void>> Api::Impl::TakeReadSlot(const std::string& tenant) {
  std::lock_guard lock(mu);
  int& reading = trace_reads[tenant];
  if (reading >= options.max_trace_reads) {
    if (reading == 0) trace_reads.erase(tenant);
    return std::nullopt;
  }
  ++reading;
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self, tenant](void*) {
    std::lock_guard lock(self->mu);
    if (--self->trace_reads[tenant] == 0) self->trace_reads.erase(tenant);
  });
}

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
  // A read holds a page in memory for as long as its client takes to read it: a tenant
  // gets a few at once, so that clients that never read cannot pile pages up.
  std::optional<std::shared_ptr<void>> slot = TakeReadSlot(x.tenant);
  if (!slot) co_return co_await SendError(x.res, TooManyReads(options.max_trace_reads), RetryAfter(1));
  if (!query.paged) co_return co_await StreamTrace(x.res, x.session_id, form);
  Result<TracePage> page = co_await ReadPage(x.session_id, TurnRange{query.after, query.limit}, form);
  if (!page.ok()) co_return co_await SendError(x.res, FromStatus(page.status()));
  std::string body = TraceOpening(x.session_id);
  for (size_t i = 0; i < page->turns.size(); ++i) body += (i > 0 ? "," : "") + page->turns[i];
  body += "]";
  if (page->more) body += ",\"next_after\":" + std::to_string(page->last_number);
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
    if (!page->more) break;
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

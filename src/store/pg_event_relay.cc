#include "store/pg_event_relay.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <vector>

namespace reins::store::pg {
namespace {

constexpr const char* kChannel = "reins_events";
constexpr size_t kMaxPayload = 7900;   // NOTIFY refuses 8,000 bytes and more
constexpr int64_t kKeepLargeMs = 60'000;  // how long a large event's row waits for readers
constexpr int kReconnectMs = 1000;

}  // namespace

EventRelay::EventRelay(std::string url, Options options, PeerEventHandler on_peer_event)
    : url_(std::move(url)),
      options_(options),
      on_peer_event_(std::move(on_peer_event)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      thread_([this] { Run(); }) {}

EventRelay::~EventRelay() {
  stop_ = true;
  Wake();
  thread_.join();
  close(wake_fd_);
}

void EventRelay::Publish(const std::string& session_id, const TraceEvent& event) {
  {
    std::lock_guard lock(mu_);
    outgoing_.emplace_back(session_id, event);
  }
  Wake();
}

void EventRelay::Wake() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void EventRelay::Pause(int ms) {
  pollfd wake{wake_fd_, POLLIN, 0};
  (void)poll(&wake, 1, ms);
}

void EventRelay::Run() {
  while (!stop_) {
    Result<std::unique_ptr<Connection>> conn = Connection::Open(url_, options_);
    if (conn.ok() && (*conn)->Run(std::string("LISTEN ") + kChannel, "cannot listen for session events").ok()) {
      if (Serve(**conn).ok()) return;
    }
    // The server is down or restarting: what was queued meanwhile is dropped, the
    // stored trace keeps it.
    {
      std::lock_guard lock(mu_);
      outgoing_.clear();
    }
    Pause(kReconnectMs);
  }
}

Status EventRelay::Serve(Connection& conn) {
  while (!stop_) {
    std::deque<std::pair<std::string, TraceEvent>> batch;
    {
      std::lock_guard lock(mu_);
      batch.swap(outgoing_);
    }
    REINS_RETURN_IF_ERROR(Send(conn, batch));
    REINS_RETURN_IF_ERROR(Receive(conn));
    pollfd fds[] = {{PQsocket(conn.raw()), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, 1000) < 0) continue;  // EINTR
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof count);
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && PQconsumeInput(conn.raw()) == 0) {
      return Unavailable("the session event relay lost its connection");
    }
  }
  return {};
}

// A batch becomes as few notifications as NOTIFY's payload allows, each a JSON object
// {"n": sequence, "es": [item, ...]} whose items are {"s": session, "e": event}, or
// {"ref": row} for an event too large for any payload. All of them go in one
// statement, so a batch is one transaction: NOTIFY costs PostgreSQL a transaction and
// a WAL record each, and a turn publishes about five events. ("n" keeps two payloads
// of one transaction distinct: NOTIFY delivers identical ones once.)
Status EventRelay::Send(Connection& conn, const std::deque<std::pair<std::string, TraceEvent>>& batch) {
  const std::string what = "cannot relay session events";
  constexpr size_t kFrame = 48;  // {"n":...,"es":[ ... ]} around the items
  std::vector<std::string> payloads;
  std::string items;
  auto seal = [&] {
    if (items.empty()) return;
    payloads.push_back(R"({"n":)" + std::to_string(++sent_) + R"(,"es":[)" + items + "]}");
    items.clear();
  };
  for (const auto& [session_id, event] : batch) {
    std::string item = Json{{"s", session_id}, {"e", TraceEventToJson(event)}}.dump();
    if (item.size() + kFrame > kMaxPayload) {
      REINS_ASSIGN_OR_RETURN(
          Rows row, conn.Exec("INSERT INTO relayed_events (created_at, payload) VALUES "
                              "((extract(epoch from clock_timestamp()) * 1000)::bigint, $1) RETURNING id",
                              {Text(item)}, what));
      REINS_RETURN_IF_ERROR(conn.Exec("DELETE FROM relayed_events WHERE created_at < "
                                      "(extract(epoch from clock_timestamp()) * 1000)::bigint - $1::bigint",
                                      {Int(kKeepLargeMs)}, what));
      item = Json{{"ref", row.Int(0, 0)}}.dump();
    }
    if (!items.empty() && items.size() + 1 + item.size() + kFrame > kMaxPayload) seal();
    if (!items.empty()) items += ',';
    items += item;
  }
  seal();
  if (payloads.empty()) return {};
  return conn.Exec("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload",
                   {Text(kChannel), TextArray(payloads)}, what)
      .status();
}

Status EventRelay::Receive(Connection& conn) {
  std::vector<std::string> payloads;
  const int own = PQbackendPID(conn.raw());
  while (PGnotify* n = PQnotifies(conn.raw())) {
    if (n->be_pid != own) payloads.emplace_back(n->extra);  // this relay's own come back too
    PQfreemem(n);
  }
  for (const std::string& text : payloads) {
    Json payload = Json::parse(text, nullptr, false);
    if (!payload.is_object()) continue;
    // One event, or its row, as a replica from before batches sends it (a rolling upgrade).
    if (!payload.contains("es")) payload = Json{{"es", Json::array({std::move(payload)})}};
    if (!payload["es"].is_array()) continue;
    for (Json& item : payload["es"]) {
      if (item.contains("ref")) {
        REINS_ASSIGN_OR_RETURN(Rows row, conn.Exec("SELECT payload FROM relayed_events WHERE id = $1",
                                                   {Int(item.value("ref", int64_t{0}))}, "cannot read a relayed event"));
        if (row.size() == 0) continue;  // older than kKeepLargeMs: the reader was too late
        item = Json::parse(row.Str(0, 0), nullptr, false);
        if (!item.is_object()) continue;
      }
      const Json& event = item.contains("e") ? item["e"] : Json();
      if (!event.is_object()) continue;
      on_peer_event_(item.value("s", ""), TraceEventFromJson(event));
    }
  }
  return {};
}

}  // namespace reins::store::pg

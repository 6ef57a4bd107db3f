#include "store/pg_event_relay.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <vector>

namespace reins::store::pg {
namespace {

constexpr const char* kChannel = "reins_events";
constexpr size_t kMaxPayload = 7900;   // NOTIFY refuses 8,000 bytes and more
constexpr int64_t kKeepLargeMs = 60'000;  // how long a large event's row waits for readers
constexpr int kReconnectMs = 1000;

std::string NewOrigin() {
  std::random_device random;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%08x%08x", random(), random());
  return hex;
}

}  // namespace

EventRelay::EventRelay(std::string url, Options options, PeerEventHandler on_peer_event)
    : url_(std::move(url)),
      options_(options),
      on_peer_event_(std::move(on_peer_event)),
      origin_(NewOrigin()),
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
    for (const auto& [session_id, event] : batch) REINS_RETURN_IF_ERROR(Send(conn, session_id, event));
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

Status EventRelay::Send(Connection& conn, const std::string& session_id, const TraceEvent& event) {
  const std::string what = "cannot relay a session event";
  std::string payload = Json{{"o", origin_}, {"s", session_id}, {"e", TraceEventToJson(event)}}.dump();
  if (payload.size() > kMaxPayload) {
    REINS_ASSIGN_OR_RETURN(
        Rows row, conn.Exec("INSERT INTO relayed_events (created_at, payload) VALUES "
                            "((extract(epoch from clock_timestamp()) * 1000)::bigint, $1) RETURNING id",
                            {Text(payload)}, what));
    REINS_RETURN_IF_ERROR(conn.Exec("DELETE FROM relayed_events WHERE created_at < "
                                    "(extract(epoch from clock_timestamp()) * 1000)::bigint - $1::bigint",
                                    {Int(kKeepLargeMs)}, what));
    payload = Json{{"o", origin_}, {"ref", row.Int(0, 0)}}.dump();
  }
  return conn.Exec("SELECT pg_notify($1, $2)", {Text(kChannel), Text(payload)}, what).status();
}

Status EventRelay::Receive(Connection& conn) {
  std::vector<std::string> payloads;
  while (PGnotify* n = PQnotifies(conn.raw())) {
    payloads.emplace_back(n->extra);
    PQfreemem(n);
  }
  for (const std::string& text : payloads) {
    Json payload = Json::parse(text, nullptr, false);
    if (!payload.is_object() || payload.value("o", "") == origin_) continue;
    if (payload.contains("ref")) {
      REINS_ASSIGN_OR_RETURN(Rows row, conn.Exec("SELECT payload FROM relayed_events WHERE id = $1",
                                                 {Int(payload.value("ref", int64_t{0}))}, "cannot read a relayed event"));
      if (row.size() == 0) continue;  // older than kKeepLargeMs: the reader was too late
      payload = Json::parse(row.Str(0, 0), nullptr, false);
      if (!payload.is_object()) continue;
    }
    const Json& event = payload.contains("e") ? payload["e"] : Json();
    if (!event.is_object()) continue;
    on_peer_event_(payload.value("s", ""), TraceEventFromJson(event));
  }
  return {};
}

}  // namespace reins::store::pg

// The EventRelay of reins/store.h on PostgreSQL's LISTEN/NOTIFY: the session events one
// replica produces reach the event streams that clients opened on the others.
//
// The relay has its own thread and its own connection, outside the pool (a connection
// that listens is never lent), so neither sending nor receiving runs on a thread that
// serves HTTP or turns. What was published while the relay sent the last batch goes
// as the next, in one statement (a transaction) of as few NOTIFY payloads as fit; an
// event too large for a payload is written to `relayed_events` and its row id travels
// instead. Event streams are
// live views, the stored trace is the record: while the relay reconnects after the
// server restarted, events of that gap are not relayed.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "reins/store.h"
#include "store/pg_connection.h"

namespace reins::store::pg {

class EventRelay final : public reins::EventRelay {
 public:
  EventRelay(std::string url, Options options, PeerEventHandler on_peer_event);
  ~EventRelay() override;

  void Publish(const std::string& session_id, const TraceEvent& event) override;

 private:
  void Run();
  // Sends what is queued and hands on what arrives, until stopped (OK) or the
  // connection fails (the error).
  Status Serve(Connection& conn);
  Status Send(Connection& conn, const std::deque<std::pair<std::string, TraceEvent>>& batch);
  Status Receive(Connection& conn);
  void Wake();
  void Pause(int ms);  // between reconnects; returns early when stopped

  const std::string url_;
  const Options options_;
  const PeerEventHandler on_peer_event_;
  int wake_fd_;               // an eventfd: Publish and the destructor wake the thread
  std::mutex mu_;
  std::deque<std::pair<std::string, TraceEvent>> outgoing_;  // guarded by mu_
  std::atomic<bool> stop_{false};
  uint64_t sent_ = 0;  // payloads sent; the relay's thread only
  std::thread thread_;
};

}  // namespace reins::store::pg

// EventStream: the bridge between runtime events (produced on the strand of the turn)
// and one SSE connection (written on the connection's strand). Events are mapped to the
// API's stream names (docs/http-api.md), queued, and written by Pump() in order, with
// heartbeats while idle.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "reins/async.h"
#include "reins/trace.h"
#include "server/http_server.h"

namespace reins {

class EventStream : public std::enable_shared_from_this<EventStream> {
 public:
  explicit EventStream(boost::asio::any_io_executor connection);

  // The events of a streamed turn (TurnInput::on_event). Any thread.
  void PushTurnEvent(const TraceEvent& e);
  // The durable events of a session (GET .../events). Any thread.
  void PushSessionEvent(const TraceEvent& e);
  void Finish();  // nothing more will come: Pump returns once the queue is written
  void Close() { Finish(); }

  // Writes queued events as they arrive, a heartbeat after `heartbeat_ms` of silence.
  // Returns true when finished, false when the client went away.
  Task<bool> Pump(ServerResponse& res, int heartbeat_ms);
  // Waits for the first event or the end, whichever comes first; true when an event
  // came (a turn the runtime refused ends without one: the caller answers its status).
  Task<bool> Started();

 private:
  void Push(std::string event, std::string data);

  boost::asio::steady_timer wake_;
  std::mutex mu_;
  std::deque<std::pair<std::string, std::string>> queue_;
  bool finished_ = false;
};

}  // namespace reins

// A session's event stream (GET /v1/sessions/{id}/events) read by a test until an event
// of `last` comes. The stream has no replay, so what the test does in the session starts
// from `subscribed`, called once the stream's head came: the server sends that head only
// after it subscribed the stream to the session.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "net/http_client.h"
#include "net/sse.h"

namespace reins::testing {

inline Task<void> ReadSessionEvents(HttpClient& client, std::string url, std::string last, std::vector<SseEvent>& events,
                                    std::function<void()> subscribed) {
  HttpRequest r;
  r.method = "GET";
  r.url = std::move(url);
  r.headers.push_back({"Accept", "text/event-stream"});
  SseParser parser;
  bool done = false;
  (void)co_await client.Stream(
      r,
      [&](std::string_view bytes) {
        parser.Feed(bytes, [&](SseEvent&& e) {
          done = done || e.event == last;
          events.push_back(std::move(e));
        });
        return done ? Aborted("seen enough") : OkStatus();
      },
      [&](const HttpResponse&) { subscribed(); });
}

}  // namespace reins::testing

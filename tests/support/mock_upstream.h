// MockUpstream: a scriptable local HTTP/1.1 server that stands in for the OpenAI and
// Anthropic APIs (and for HTTP tool endpoints) in tests. Each request takes the next
// scripted MockReply, whatever its path; replies can be delayed, streamed in separate
// chunks, cut short, made endless, or withheld, so clients can be tested against the
// faults real upstreams produce.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace reins::testing {

struct MockReply {
  int status = 200;
  // Sent as given, e.g. {"Content-Type","application/json"}, {"Retry-After","1"}. A
  // Content-Length or Transfer-Encoding here replaces the framing the server would pick
  // (so a Content-Length larger than the body plus cut_after_chunks fakes a short body).
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> chunks;  // body pieces, each written and flushed separately
  // Transfer-Encoding: chunked. Forced on when chunks.size() > 1, endless, or
  // cut_after_chunks (without a Content-Length header); else Content-Length.
  bool chunked = false;
  int first_byte_delay_ms = 0;       // wait after reading the request, before writing anything
  int chunk_delay_ms = 0;            // wait between chunks
  bool cut_after_chunks = false;     // after the chunks, close the connection (no terminating 0-chunk)
  bool endless = false;              // after the chunks, write endless_chunk every max(chunk_delay_ms,10) ms until the client goes away
  std::string endless_chunk = ": ping\n\n";
  bool close_without_reply = false;  // read the request, then close the connection without writing a byte
  // Latency benches: "{now_us}" in a chunk becomes CLOCK_MONOTONIC in microseconds at
  // the moment the chunk is written (a chunked reply: its size is known only then).
  bool stamp_now = false;
};

struct RecordedRequest {
  std::string method, target;                  // "POST", "/v1/chat/completions"
  std::map<std::string, std::string> headers;  // names lower-cased; repeated names joined with ", "
  std::string body;
};

class MockUpstream {
 public:
  MockUpstream();   // binds 127.0.0.1 on an ephemeral port; serves on its own thread with its own io_context
  ~MockUpstream();  // stops accepting, closes every connection (including endless streams), joins the thread
  MockUpstream(const MockUpstream&) = delete;
  MockUpstream& operator=(const MockUpstream&) = delete;

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT"

  // Replies are served in FIFO order regardless of path. With an empty queue the server
  // answers 500 with body {"error":{"message":"mock upstream: no scripted reply","type":"mock"}}.
  void Enqueue(MockReply reply);
  // Instead of the queue: every request's reply is chosen from the request itself (many
  // conversations at once). Requests are then not recorded. Set before the first request.
  void Respond(std::function<MockReply(const RecordedRequest&)> responder) { responder_ = std::move(responder); }
  std::vector<RecordedRequest> requests() const;  // thread-safe copy, in arrival order
  int connections_accepted() const;               // for connection-reuse tests

  static MockReply Json(int status, std::string body,
                        std::vector<std::pair<std::string, std::string>> extra_headers = {});
  // text/event-stream; each element of `events` is written as its own chunk (exactly those bytes).
  static MockReply Sse(std::vector<std::string> events);

 private:
  class Connection;

  void StartAccept();
  MockReply TakeReply(RecordedRequest request);
  void CloseAll();

  mutable std::mutex mu_;
  std::deque<MockReply> queue_;
  std::function<MockReply(const RecordedRequest&)> responder_;
  std::vector<RecordedRequest> requests_;
  int accepted_ = 0;
  // Live connections, touched only on the server thread (or after it is joined).
  // Declared before io_ so it outlives the connections io_ destroys on shutdown.
  std::set<std::shared_ptr<Connection>> connections_;

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace reins::testing

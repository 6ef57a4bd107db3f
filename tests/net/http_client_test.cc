// The HTTP client against the local mock upstream (tests/support/mock_upstream.h):
// real sockets on loopback, every fault the providers must survive.
#include "net/http_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <variant>
#include <vector>

#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "support/mock_upstream.h"
#include "support/run_sync.h"

namespace reins {
namespace {

using testing::MockReply;
using testing::MockUpstream;
using testing::RunSync;

HttpRequest Post(const MockUpstream& up, std::string path, std::string body = "{\"q\":1}") {
  HttpRequest r;
  r.url = up.base_url() + path;
  r.body = std::move(body);
  r.headers.push_back({"Authorization", "Bearer test"});
  return r;
}

TEST(HttpClient, SendsAndReadsAWholeResponse) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Json(200, R"({"ok":true})"));
  HttpClient client;
  auto r = RunSync(client.Send(Post(up, "/v1/chat/completions")));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"ok":true})");
  EXPECT_EQ(r->Header("content-type"), "application/json");
  auto seen = up.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/v1/chat/completions");
  EXPECT_EQ(seen[0].headers["authorization"], "Bearer test");
  EXPECT_EQ(seen[0].headers["content-type"], "application/json");
  EXPECT_EQ(seen[0].body, "{\"q\":1}");
}

// A response's fields by name, whatever their case: the first of a repeated one, "" for
// one it does not have, and no field by a name that only starts another's.
TEST(HttpClient, FindsAResponsesHeaderFieldsByName) {
  HttpResponse r;
  r.AddHeader("Content-Type", "application/json");
  r.AddHeader("X-Rate", "1");
  r.AddHeader("x-rate", "2");
  r.AddHeader("Retry-After-Ms", "30");
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(r.Header("CONTENT-TYPE"), "application/json");
  EXPECT_EQ(r.Header("x-rate"), "1");
  EXPECT_EQ(r.Header("retry-after"), "");
  EXPECT_EQ(r.Header("retry-after-ms"), "30");
  EXPECT_EQ(r.Header("content"), "");
  EXPECT_EQ(HttpResponse().Header("content-type"), "");
  HttpResponse unended;  // set by hand, its last line without CRLF
  unended.headers = "X-A: 1\r\nX-B: 2";
  EXPECT_EQ(unended.Header("x-b"), "2");
  EXPECT_EQ(unended.Header("x-c"), "");
}

// An address connects straight away; a name goes through the resolver first.
TEST(HttpClient, ConnectsToAnAddressAndToAName) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Json(200, R"({"by":"address"})"));
  up.Enqueue(MockUpstream::Json(200, R"({"by":"name"})"));
  HttpClient::Options fresh;
  fresh.max_idle_per_origin = 0;  // the second request opens a connection of its own
  HttpClient client(fresh);
  auto by_address = RunSync(client.Send(Post(up, "/a")));
  ASSERT_TRUE(by_address.ok()) << by_address.status().message();
  HttpRequest named = Post(up, "/n");
  const std::string address = "127.0.0.1";
  ASSERT_EQ(named.url.find(address), std::string("http://").size());
  named.url.replace(named.url.find(address), address.size(), "localhost");
  auto by_name = RunSync(client.Send(named));
  ASSERT_TRUE(by_name.ok()) << by_name.status().message();
  EXPECT_EQ(by_name->body, R"({"by":"name"})");
  EXPECT_EQ(up.requests().size(), 2u);
}

// The client writes request heads itself, with the framing Beast gave them: a caller's
// field replaces a default of the same name, a GET without a body says no length or
// type, an empty POST says its length is 0, and a field with a line break is refused
// before anything is sent.
TEST(HttpClient, FramesRequestsAsBeastDid) {
  MockUpstream up;
  for (int i = 0; i < 2; ++i) up.Enqueue(MockUpstream::Json(200, "{}"));
  HttpClient client;
  HttpRequest get;
  get.method = "GET";
  get.url = up.base_url() + "/v1/models?x=1";
  get.headers.push_back({"user-agent", "custom/1"});
  ASSERT_TRUE(RunSync(client.Send(get)).ok());
  HttpRequest empty = Post(up, "/x", "");
  ASSERT_TRUE(RunSync(client.Send(empty)).ok());
  HttpRequest split = Post(up, "/x");
  split.headers.push_back({"X-Note", "a\r\nX-Injected: 1"});
  Result<HttpResponse> refused = RunSync(client.Send(split));
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);

  auto seen = up.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/v1/models?x=1");
  EXPECT_EQ(seen[0].headers["user-agent"], "custom/1");
  EXPECT_EQ(seen[0].headers.count("content-length"), 0u);
  EXPECT_EQ(seen[0].headers.count("content-type"), 0u);
  EXPECT_EQ(seen[0].headers["host"], up.base_url().substr(std::string("http://").size()));
  EXPECT_EQ(seen[1].headers["content-length"], "0");
  EXPECT_EQ(seen[1].headers["user-agent"], "reins/0.1");
}

TEST(HttpClient, ReusesAKeptAliveConnection) {
  MockUpstream up;
  for (int i = 0; i < 3; ++i) up.Enqueue(MockUpstream::Json(200, "{}"));
  HttpClient client;
  int ok = 0;
  auto three = [&]() -> Task<void> {
    for (int i = 0; i < 3; ++i) ok += (co_await client.Send(Post(up, "/x"))).ok();
  };
  RunSync(three());
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(client.connections_opened(), 1);
  EXPECT_EQ(up.connections_accepted(), 1);
}

// The pool keeps as many idle connections as ran at once: a second burst of eight
// reuses the first burst's eight (a cap of four closed half of them after each burst).
TEST(HttpClient, KeepsAsManyIdleConnectionsAsRanAtOnce) {
  MockUpstream up;
  for (int i = 0; i < 16; ++i) {
    MockReply r = MockUpstream::Json(200, "{}");
    r.first_byte_delay_ms = 100;  // the eight of a burst overlap
    up.Enqueue(r);
  }
  HttpClient client;
  int ok = 0;
  int left = 0;
  auto one = [&]() -> Task<void> {
    ok += (co_await client.Send(Post(up, "/x"))).ok();
    --left;
  };
  auto burst = [&]() -> Task<void> {
    auto ex = co_await boost::asio::this_coro::executor;
    left = 8;
    for (int i = 0; i < 8; ++i) boost::asio::co_spawn(ex, one(), boost::asio::detached);
    boost::asio::steady_timer wait(ex);
    while (left > 0) {
      wait.expires_after(std::chrono::milliseconds(5));
      co_await wait.async_wait(boost::asio::use_awaitable);
    }
  };
  auto two = [&]() -> Task<void> {
    co_await burst();
    co_await burst();
  };
  RunSync(two());
  EXPECT_EQ(ok, 16);
  EXPECT_EQ(client.connections_opened(), 8);
  EXPECT_EQ(up.connections_accepted(), 8);
}

// A connection is not reused after its server's announced keep-alive time (less a
// second, so that a request never races the close), nor after idle_keep_ms.
TEST(HttpClient, ReusesAConnectionOnlyWhileItsKeepAliveLasts) {
  MockUpstream up;
  MockReply brief = MockUpstream::Json(200, "{}");
  brief.headers.push_back({"Keep-Alive", "timeout=1"});
  up.Enqueue(brief);
  up.Enqueue(MockUpstream::Json(200, "{}"));
  HttpClient client;
  int ok = 0;
  auto two = [&]() -> Task<void> {
    for (int i = 0; i < 2; ++i) ok += (co_await client.Send(Post(up, "/x"))).ok();
  };
  RunSync(two());
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(client.connections_opened(), 2);

  MockUpstream later;
  for (int i = 0; i < 3; ++i) later.Enqueue(MockUpstream::Json(200, "{}"));
  HttpClient::Options options;
  options.idle_keep_ms = 300;  // "at once" has that long on a busy machine
  HttpClient keeping(options);
  auto spaced = [&]() -> Task<void> {
    ok += (co_await keeping.Send(Post(later, "/x"))).ok();
    ok += (co_await keeping.Send(Post(later, "/x"))).ok();  // at once: reused
    boost::asio::steady_timer pause(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(500));
    co_await pause.async_wait(boost::asio::use_awaitable);
    ok += (co_await keeping.Send(Post(later, "/x"))).ok();  // after idle_keep_ms: a new one
  };
  RunSync(spaced());
  EXPECT_EQ(ok, 5);
  EXPECT_EQ(keeping.connections_opened(), 2);
}

// A connection sizes its next read by the last response: each body still arrives whole
// and exact, whether it is larger than the last (read in more calls) or smaller.
TEST(HttpClient, OneConnectionReadsResponsesLargerAndSmallerThanTheLast) {
  const std::vector<std::string> bodies = {"{}", "\"" + std::string(40000, 'a') + "\"", "[1]",
                                           "\"" + std::string(3000, 'b') + "\"", "{}"};
  MockUpstream up;
  for (const std::string& body : bodies) up.Enqueue(MockUpstream::Json(200, body));
  HttpClient client;
  std::vector<std::string> got;
  auto all = [&]() -> Task<void> {
    for (size_t i = 0; i < bodies.size(); ++i) {
      Result<HttpResponse> r = co_await client.Send(Post(up, "/x"));
      got.push_back(r.ok() ? r->body : r.status().message());
    }
  };
  RunSync(all());
  EXPECT_EQ(got, bodies);
  EXPECT_EQ(client.connections_opened(), 1);
}

// A request goes into the socket at once where it fits (WriteNow), and what does not fit
// (a body larger than the socket's buffer) follows asynchronously: every byte arrives,
// in order, on each request of a kept-alive connection.
TEST(HttpClient, SendsARequestLargerThanTheSocketTakesAtOnceWhole) {
  std::string large(6u << 20, 'x');  // more than a loopback socket takes at once (about 4 MB)
  for (size_t i = 0; i < large.size(); i += 4096) large[i] = static_cast<char>('a' + (i / 4096) % 26);
  const std::vector<std::string> bodies = {"{}", large, "[1]", large};
  MockUpstream up;
  for (size_t i = 0; i < bodies.size(); ++i) up.Enqueue(MockUpstream::Json(200, "{}"));
  HttpClient client;
  auto all = [&]() -> Task<void> {
    for (const std::string& body : bodies) {
      Result<HttpResponse> r = co_await client.Send(Post(up, "/x", body));
      EXPECT_TRUE(r.ok()) << r.status().message();
    }
  };
  RunSync(all());
  const std::vector<testing::RecordedRequest> seen = up.requests();
  ASSERT_EQ(seen.size(), bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) EXPECT_TRUE(seen[i].body == bodies[i]) << "request " << i;
  EXPECT_EQ(client.connections_opened(), 1);
}

// An answer ({"n":1}), then a request read and dropped unanswered, then {"n":2}.
void EnqueueAnAnswerADropAndAnAnswer(MockUpstream& up) {
  up.Enqueue(MockUpstream::Json(200, "{\"n\":1}"));
  MockReply drop;
  drop.close_without_reply = true;
  up.Enqueue(drop);
  up.Enqueue(MockUpstream::Json(200, "{\"n\":2}"));
}

TEST(HttpClient, ReplacesAPooledConnectionTheServerDropped) {
  MockUpstream up;
  EnqueueAnAnswerADropAndAnAnswer(up);
  HttpClient client;
  std::string second;
  auto two = [&]() -> Task<void> {
    (void)co_await client.Send(Post(up, "/x"));
    auto r = co_await client.Send(Post(up, "/x"));
    second = r.ok() ? r->body : r.status().message();
  };
  RunSync(two());
  EXPECT_EQ(second, "{\"n\":2}");
  EXPECT_EQ(client.connections_opened(), 2);
}

// A caller that can build its request again lets the client free its head and body once
// written; the retry on a fresh connection then sends the request built again, and gives
// up (the request is Unavailable) when that is not the same length as what was sent.
TEST(HttpClient, ARetryAfterTheRequestWasFreedSendsItBuiltAgain) {
  MockUpstream up;
  EnqueueAnAnswerADropAndAnAnswer(up);
  MockReply drop;
  drop.close_without_reply = true;
  up.Enqueue(drop);
  HttpClient client;
  int built = 0;
  std::string second, third;
  auto three = [&]() -> Task<void> {
    (void)co_await client.Send(Post(up, "/x"));
    auto second_request = [&] {
      HttpRequest r = Post(up, "/x", "{\"q\":2}");
      r.headers.push_back({"X-Try", "two"});
      return r;
    };
    HttpRequest same = second_request();
    same.again = [&] { return ++built, second_request(); };
    auto r = co_await client.Send(std::move(same));
    second = r.ok() ? r->body : r.status().message();
    HttpRequest changed = Post(up, "/x", "{\"q\":3}");
    changed.again = [&] { return ++built, Post(up, "/x", "{\"q\":33}"); };
    auto s = co_await client.Send(std::move(changed));
    third = s.ok() ? s->body : StatusCodeName(s.status().code());
  };
  RunSync(three());
  EXPECT_EQ(second, "{\"n\":2}");
  EXPECT_EQ(third, "unavailable");
  EXPECT_EQ(built, 2);
  std::vector<testing::RecordedRequest> seen = up.requests();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1].body, "{\"q\":2}");
  EXPECT_EQ(seen[2].body, "{\"q\":2}");  // the retry, on a fresh connection, head and body
  EXPECT_EQ(seen[2].method, "POST");
  EXPECT_EQ(seen[2].target, "/x");
  EXPECT_EQ(seen[2].headers["x-try"], "two");
  EXPECT_EQ(seen[2].headers["content-length"], "7");
  EXPECT_EQ(seen[3].body, "{\"q\":3}");
}

TEST(HttpClient, StreamsA2xxBodyAsItArrives) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Sse({"data: one\n\n", "data: two\n\n", "data: [DONE]\n\n"}));
  HttpClient client;
  std::string seen;
  int pieces = 0;
  auto r = RunSync(client.Stream(Post(up, "/s"), [&](std::string_view piece) {
    seen.append(piece);
    ++pieces;
    return OkStatus();
  }));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(seen, "data: one\n\ndata: two\n\ndata: [DONE]\n\n");
  EXPECT_GE(pieces, 1);
  EXPECT_TRUE(r->body.empty());
}

TEST(HttpClient, ReadsAnErrorBodyWholeInsteadOfStreamingIt) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Json(429, R"({"error":{"message":"slow down"}})", {{"Retry-After", "1"}}));
  HttpClient client;
  bool called = false;
  auto r = RunSync(client.Stream(Post(up, "/s"), [&](std::string_view) {
    called = true;
    return OkStatus();
  }));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->Header("retry-after"), "1");
  EXPECT_NE(r->body.find("slow down"), std::string::npos);
  EXPECT_FALSE(called);
}

TEST(HttpClient, AConnectionClosedBeforeAnyByteIsUnavailable) {
  MockUpstream up;
  MockReply drop;
  drop.close_without_reply = true;
  up.Enqueue(drop);
  HttpClient client;
  auto r = RunSync(client.Send(Post(up, "/x")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("POST " + up.base_url() + "/x"), std::string::npos) << r.status().message();
}

TEST(HttpClient, AStreamCutMidwayIsAborted) {
  MockUpstream up;
  MockReply cut = MockUpstream::Sse({"data: one\n\n", "data: tw"});
  cut.cut_after_chunks = true;
  up.Enqueue(cut);
  HttpClient client;
  std::string seen;
  auto r = RunSync(client.Stream(Post(up, "/s"), [&](std::string_view piece) {
    seen.append(piece);
    return OkStatus();
  }));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kAborted) << r.status().ToString();
  EXPECT_EQ(seen.rfind("data: one\n\n", 0), 0u);
}

TEST(HttpClient, ASlowFirstByteTimesOut) {
  MockUpstream up;
  MockReply slow = MockUpstream::Json(200, "{}");
  slow.first_byte_delay_ms = 10000;  // never waited for: the mock is stopped, not waited out
  up.Enqueue(slow);
  HttpClient client;
  HttpRequest req = Post(up, "/x");
  req.timeouts.first_byte_ms = 100;
  auto start = std::chrono::steady_clock::now();
  auto r = RunSync(client.Send(req));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("first byte timeout of 100 ms"), std::string::npos) << r.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(8000));
}

// The wait for the first byte runs on a timer of its own (no read is pending while the
// server thinks): the shorter of the two deadlines ends it, and the connection it gave
// up on is not pooled for the next request.
TEST(HttpClient, AFirstByteWaitEndsAtTheTotalTimeoutWhenThatComesFirst) {
  MockUpstream up;
  MockReply slow = MockUpstream::Json(200, "{}");
  slow.first_byte_delay_ms = 30000;
  up.Enqueue(slow);
  up.Enqueue(MockUpstream::Json(200, "{\"ok\":true}"));
  HttpClient client;
  HttpRequest req = Post(up, "/x");
  req.timeouts.first_byte_ms = 20000;
  req.timeouts.total_ms = 150;
  auto start = std::chrono::steady_clock::now();
  auto r = RunSync(client.Send(req));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("total timeout of 150 ms"), std::string::npos) << r.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(10000));

  auto next = RunSync(client.Send(Post(up, "/y")));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->body, "{\"ok\":true}");
  EXPECT_EQ(client.connections_opened(), 2);
}

TEST(HttpClient, AnEndlessStreamStopsAtTheTotalTimeout) {
  MockUpstream up;
  MockReply endless = MockUpstream::Sse({"data: start\n\n"});
  endless.endless = true;
  endless.chunk_delay_ms = 10;
  up.Enqueue(endless);
  HttpClient client;
  HttpRequest req = Post(up, "/s");
  req.timeouts.total_ms = 300;
  int pieces = 0;
  auto r = RunSync(client.Stream(req, [&](std::string_view) {
    ++pieces;
    return OkStatus();
  }));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("total timeout of 300 ms"), std::string::npos) << r.status().message();
  EXPECT_GT(pieces, 1);
}

TEST(HttpClient, ABodyThatStallsStopsAtTheIdleTimeout) {
  MockUpstream up;
  MockReply stalls = MockUpstream::Sse({"data: start\n\n"});
  stalls.endless = true;
  stalls.chunk_delay_ms = 10000;  // the first event at once, then nothing for longer than the idle timeout
  up.Enqueue(stalls);
  HttpClient client;
  HttpRequest req = Post(up, "/s");
  req.timeouts.idle_ms = 150;
  int pieces = 0;
  const auto start = std::chrono::steady_clock::now();
  auto r = RunSync(client.Stream(req, [&](std::string_view) {
    ++pieces;
    return OkStatus();
  }));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("the response stalled: idle timeout of 150 ms"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(pieces, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(8000));
}

TEST(HttpClient, AnEndlessStreamStopsAtTheResponseCap) {
  MockUpstream up;
  MockReply endless = MockUpstream::Sse({"data: start\n\n"});
  endless.endless = true;
  endless.endless_chunk = std::string(512, 'x');
  endless.chunk_delay_ms = 1;
  up.Enqueue(endless);
  HttpClient client(HttpClient::Options{.max_response_bytes = 8 * 1024});
  auto r = RunSync(client.Stream(Post(up, "/s"), [](std::string_view) { return OkStatus(); }));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
}

TEST(HttpClient, RefusesAnOversizedRequestBeforeSendingIt) {
  MockUpstream up;
  HttpClient client(HttpClient::Options{.max_request_bytes = 16});
  auto r = RunSync(client.Send(Post(up, "/x", std::string(100, 'a'))));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(up.requests().empty());
}

TEST(HttpClient, ACallbackErrorStopsTheStream) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Sse({"data: bad\n\n", "data: more\n\n"}));
  HttpClient client;
  auto r = RunSync(client.Stream(Post(up, "/s"), [](std::string_view) { return InvalidArgument("malformed chunk"); }));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "malformed chunk");
}

// The caller's own Unavailable from a stream (a provider's error event) on a reused
// connection: bytes of the answer came, so the server had the request, and it is not
// sent again on a fresh connection as a request the server never saw would be.
TEST(HttpClient, AStreamTheCallerStopsOnAReusedConnectionIsNotSentAgain) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Json(200, "{}"));
  up.Enqueue(MockUpstream::Sse({"data: {\"error\":\"overloaded\"}\n\n"}));
  up.Enqueue(MockUpstream::Json(200, "{}"));  // what a second try would be answered
  HttpClient client;
  std::optional<Result<HttpResponse>> streamed;
  auto two = [&]() -> Task<void> {
    (void)co_await client.Send(Post(up, "/x"));
    streamed.emplace(co_await client.Stream(Post(up, "/s"), [](std::string_view) { return Unavailable("overloaded"); }));
  };
  RunSync(two());
  ASSERT_TRUE(streamed.has_value());
  ASSERT_FALSE(streamed->ok());
  EXPECT_EQ(streamed->status().message(), "overloaded");
  EXPECT_EQ(up.requests().size(), 2u) << "the stream's request went out once";
  EXPECT_EQ(client.connections_opened(), 1);
}

TEST(HttpClient, ReportsRefusedConnectionsAndTlsFailures) {
  int dead_port = 0;
  {
    MockUpstream up;
    dead_port = up.port();
  }
  HttpClient client;
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(dead_port) + "/x";
  auto refused = RunSync(client.Send(req));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("connect to"), std::string::npos) << refused.status().message();

  // TLS spoken to a plain-HTTP server: the handshake fails, with certificate checks on.
  MockUpstream plain;
  req.url = "https://127.0.0.1:" + std::to_string(plain.port()) + "/x";
  auto tls = RunSync(client.Send(req));
  ASSERT_FALSE(tls.ok());
  EXPECT_NE(tls.status().message().find("TLS handshake"), std::string::npos) << tls.status().message();
}

TEST(HttpClient, HonoursAsioCancellation) {
  using namespace boost::asio::experimental::awaitable_operators;
  MockUpstream up;
  MockReply slow = MockUpstream::Json(200, "{}");
  slow.first_byte_delay_ms = 10000;
  up.Enqueue(slow);
  HttpClient client;
  boost::asio::io_context io;
  bool timer_won = false;
  auto race = [&]() -> Task<void> {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(100));
    auto winner = co_await (client.Send(Post(up, "/x")) || timer.async_wait(boost::asio::use_awaitable));
    timer_won = winner.index() == 1;
  };
  auto start = std::chrono::steady_clock::now();
  boost::asio::co_spawn(io, race(), boost::asio::detached);
  io.run();
  EXPECT_TRUE(timer_won);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(8000));
}

}  // namespace
}  // namespace reins

// Drives MockUpstream with a plain blocking Beast client, so a fault in the mock cannot
// hide behind a fault in the client under test elsewhere.
#include "support/mock_upstream.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/mock_payloads.h"

namespace reins::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using Response = http::response<http::string_body>;

long ElapsedMs(Clock::time_point since) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count());
}

// One blocking client connection. Reads time out after 5 s so a broken mock fails the
// test instead of hanging it.
struct Client {
  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;

  explicit Client(int port) {
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
    timeval tv{5, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  void Send(const std::string& method, const std::string& target, const std::string& body = "",
            bool close = false) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::authorization, "Bearer sk-test");
    req.set("X-Mock-Case", "Mixed-Case-Value");
    req.keep_alive(!close);
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
  }

  Response Read() {
    Response res;
    http::read(socket, buffer, res);
    return res;
  }

  Response Call(const std::string& method, const std::string& target, const std::string& body = "") {
    Send(method, target, body);
    return Read();
  }
};

TEST(MockUpstreamTest, ServesRepliesInFifoOrderAndRecordsRequests) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(200, R"({"n":1})"));
  server.Enqueue(MockUpstream::Json(201, R"({"n":2})"));
  EXPECT_EQ(server.base_url(), "http://127.0.0.1:" + std::to_string(server.port()));

  Client c(server.port());
  Response first = c.Call("POST", "/v1/chat/completions", R"({"model":"m"})");
  Response second = c.Call("GET", "/v1/models");
  EXPECT_EQ(first.result_int(), 200);
  EXPECT_EQ(first.body(), R"({"n":1})");
  EXPECT_EQ(first[http::field::content_type], "application/json");
  EXPECT_EQ(second.result_int(), 201);
  EXPECT_EQ(second.body(), R"({"n":2})");

  std::vector<RecordedRequest> reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].target, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].body, R"({"model":"m"})");
  EXPECT_EQ(reqs[0].headers.at("authorization"), "Bearer sk-test");
  EXPECT_EQ(reqs[0].headers.at("x-mock-case"), "Mixed-Case-Value");
  EXPECT_EQ(reqs[0].headers.at("content-type"), "application/json");
  EXPECT_EQ(reqs[1].method, "GET");
  EXPECT_EQ(reqs[1].target, "/v1/models");
}

TEST(MockUpstreamTest, EmptyQueueAnswers500WithMockMessage) {
  MockUpstream server;
  Client c(server.port());
  Response res = c.Call("POST", "/v1/messages", "{}");
  EXPECT_EQ(res.result_int(), 500);
  json body = json::parse(res.body());
  EXPECT_EQ(body["error"]["message"], "mock upstream: no scripted reply");
  EXPECT_EQ(body["error"]["type"], "mock");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(MockUpstreamTest, KeepsConnectionsAlive) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(200, "a"));
  server.Enqueue(MockUpstream::Json(200, "b"));
  server.Enqueue(MockUpstream::Json(200, "c"));
  {
    Client c(server.port());
    Response a = c.Call("POST", "/x", "1");
    Response b = c.Call("POST", "/x", "2");
    EXPECT_TRUE(a.keep_alive());
    EXPECT_EQ(b.body(), "b");
    EXPECT_EQ(server.connections_accepted(), 1);
  }
  Client other(server.port());
  EXPECT_EQ(other.Call("POST", "/x").body(), "c");
  EXPECT_EQ(server.connections_accepted(), 2);
}

TEST(MockUpstreamTest, RequestAskingForCloseGetsConnectionClosed) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(200, "bye"));
  Client c(server.port());
  c.Send("POST", "/x", "", /*close=*/true);
  Response res = c.Read();
  EXPECT_FALSE(res.keep_alive());
  EXPECT_EQ(res.body(), "bye");
  char byte;
  error_code ec;
  c.socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof);
}

TEST(MockUpstreamTest, ChunkedRepliesArriveAsSeparateChunks) {
  MockUpstream server;
  MockReply reply = MockUpstream::Sse({"data: one\n\n", "data: two\n\n", "data: [DONE]\n\n"});
  reply.chunk_delay_ms = 30;
  server.Enqueue(reply);
  server.Enqueue(MockUpstream::Json(200, "after"));

  Client c(server.port());
  c.Send("POST", "/v1/chat/completions");
  http::response_parser<http::string_body> parser;
  int chunks = 0;
  auto on_chunk = [&](std::uint64_t size, beast::string_view, error_code&) {
    if (size > 0) ++chunks;
  };
  parser.on_chunk_header(on_chunk);
  auto start = Clock::now();
  http::read(c.socket, c.buffer, parser);
  EXPECT_GE(ElapsedMs(start), 55);
  Response res = parser.release();
  EXPECT_TRUE(res.chunked());
  EXPECT_EQ(chunks, 3);
  EXPECT_EQ(res[http::field::content_type], "text/event-stream");
  EXPECT_EQ(res.body(), "data: one\n\ndata: two\n\ndata: [DONE]\n\n");
  EXPECT_EQ(c.Call("POST", "/x").body(), "after");  // the chunked reply ended cleanly
}

TEST(MockUpstreamTest, SingleChunkWithoutChunkedUsesContentLength) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(200, "plain"));
  Client c(server.port());
  Response res = c.Call("POST", "/x");
  EXPECT_FALSE(res.chunked());
  EXPECT_EQ(res[http::field::content_length], "5");
}

TEST(MockUpstreamTest, SendsScriptedHeaders) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(429, OpenAIError("slow down", "requests", "rate_limit_exceeded"),
                                    {{"Retry-After", "1"}, {"x-should-retry", "true"}}));
  Client c(server.port());
  Response res = c.Call("POST", "/v1/chat/completions");
  EXPECT_EQ(res.result_int(), 429);
  EXPECT_EQ(res["Retry-After"], "1");
  EXPECT_EQ(res["x-should-retry"], "true");
  EXPECT_EQ(json::parse(res.body())["error"]["code"], "rate_limit_exceeded");
}

TEST(MockUpstreamTest, UnusualStatusCodesPassThrough) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(529, AnthropicError("overloaded_error", "Overloaded")));
  Client c(server.port());
  Response res = c.Call("POST", "/v1/messages");
  EXPECT_EQ(res.result_int(), 529);
  EXPECT_EQ(json::parse(res.body())["error"]["type"], "overloaded_error");
}

TEST(MockUpstreamTest, CloseWithoutReplyFailsBeforeAnyByte) {
  MockUpstream server;
  MockReply reply;
  reply.close_without_reply = true;
  server.Enqueue(reply);
  Client c(server.port());
  c.Send("POST", "/x", "{}");
  Response res;
  error_code ec;
  http::read(c.socket, c.buffer, res, ec);
  EXPECT_TRUE(ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset)
      << ec.message();
  EXPECT_EQ(c.buffer.size(), 0u);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(MockUpstreamTest, CutAfterChunksGivesPartialBodyThenError) {
  MockUpstream server;
  MockReply reply = MockUpstream::Sse({"data: part1\n\n", "data: part2\n\n"});
  reply.cut_after_chunks = true;
  server.Enqueue(reply);
  Client c(server.port());
  c.Send("POST", "/x");
  http::response_parser<http::string_body> parser;
  error_code ec;
  http::read(c.socket, c.buffer, parser, ec);
  EXPECT_EQ(ec, http::error::partial_message) << ec.message();
  EXPECT_EQ(parser.get().body(), "data: part1\n\ndata: part2\n\n");
}

TEST(MockUpstreamTest, CutWithScriptedContentLengthGivesShortBody) {
  MockUpstream server;
  MockReply reply = MockUpstream::Json(200, R"({"choices":[)", {{"Content-Length", "100"}});
  reply.cut_after_chunks = true;
  server.Enqueue(reply);
  Client c(server.port());
  c.Send("POST", "/x");
  http::response_parser<http::string_body> parser;
  error_code ec;
  http::read(c.socket, c.buffer, parser, ec);
  EXPECT_EQ(ec, http::error::partial_message) << ec.message();
  EXPECT_FALSE(parser.get().chunked());
  EXPECT_EQ(parser.get().body(), R"({"choices":[)");
}

TEST(MockUpstreamTest, FirstByteDelayIsHonoured) {
  MockUpstream server;
  MockReply reply = MockUpstream::Json(200, "late");
  reply.first_byte_delay_ms = 200;
  server.Enqueue(reply);
  Client c(server.port());
  auto start = Clock::now();
  Response res = c.Call("POST", "/x");
  EXPECT_GE(ElapsedMs(start), 195);
  EXPECT_EQ(res.body(), "late");
}

TEST(MockUpstreamTest, AcceptsLargeRequestBodies) {
  MockUpstream server;
  server.Enqueue(MockUpstream::Json(200, "{}"));
  std::string big(3 << 20, 'x');
  Client c(server.port());
  EXPECT_EQ(c.Call("POST", "/x", big).result_int(), 200);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].body.size(), big.size());
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

TEST(MockUpstreamTest, DestroyingServerEndsEndlessStreamPromptly) {
  auto server = std::make_unique<MockUpstream>();
  MockReply reply = MockUpstream::Sse({"data: first\n\n"});
  reply.endless = true;
  server->Enqueue(reply);
  Client c(server->port());
  c.Send("POST", "/x");
  http::response_parser<http::string_body> parser;
  http::read_header(c.socket, c.buffer, parser);
  EXPECT_TRUE(parser.get().chunked());
  while (Count(parser.get().body(), ": ping\n\n") < 3) http::read_some(c.socket, c.buffer, parser);
  EXPECT_EQ(parser.get().body().rfind("data: first\n\n", 0), 0u);

  auto start = Clock::now();
  server.reset();
  EXPECT_LT(ElapsedMs(start), 5000);  // the stream would never end: a margin for a busy machine

  error_code ec;
  http::read(c.socket, c.buffer, parser, ec);
  EXPECT_TRUE(ec) << "the stream has no end but the server is gone";
}

TEST(MockUpstreamTest, DestroyingServerClosesIdleKeptAliveConnections) {
  auto server = std::make_unique<MockUpstream>();
  server->Enqueue(MockUpstream::Json(200, "x"));
  Client c(server->port());
  EXPECT_EQ(c.Call("POST", "/x").body(), "x");
  MockReply slow = MockUpstream::Json(200, "never");
  slow.first_byte_delay_ms = 10000;
  server->Enqueue(slow);
  Client waiting(server->port());
  waiting.Send("POST", "/x");
  while (server->requests().size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  auto start = Clock::now();
  server.reset();
  EXPECT_LT(ElapsedMs(start), 5000);  // not the 10 s sleep: a margin for a busy machine
  char byte;
  error_code ec;
  c.socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec);
  waiting.socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec);
}

// --- payload helpers -------------------------------------------------------------

struct Parsed {
  std::string text;
  std::vector<MockCall> calls;
  std::string finish;
  int output_tokens = -1;
  bool done = false;
};

// Splits a concatenated SSE stream into (event, data) pairs, as a client would.
std::vector<std::pair<std::string, std::string>> SplitSse(const std::string& stream) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  for (size_t end = stream.find("\n\n"); end != std::string::npos; end = stream.find("\n\n", pos)) {
    std::string block = stream.substr(pos, end - pos);
    pos = end + 2;
    std::pair<std::string, std::string> ev;
    size_t line_start = 0;
    while (line_start <= block.size()) {
      size_t nl = block.find('\n', line_start);
      std::string line = block.substr(line_start, nl == std::string::npos ? std::string::npos : nl - line_start);
      if (line.rfind("event: ", 0) == 0) ev.first = line.substr(7);
      if (line.rfind("data: ", 0) == 0) ev.second = line.substr(6);
      if (nl == std::string::npos) break;
      line_start = nl + 1;
    }
    out.push_back(ev);
  }
  EXPECT_EQ(pos, stream.size()) << "stream must end with a blank line";
  return out;
}

std::string Join(const std::vector<std::string>& events) {
  std::string all;
  for (const auto& e : events) all += e;
  return all;
}

Parsed ParseOpenAI(const std::vector<std::string>& events) {
  Parsed p;
  for (const auto& [name, data] : SplitSse(Join(events))) {
    if (data == "[DONE]") {
      p.done = true;
      continue;
    }
    json chunk = json::parse(data);
    if (chunk["usage"].is_object()) p.output_tokens = chunk["usage"]["completion_tokens"];
    for (const auto& choice : chunk["choices"]) {
      const json& delta = choice["delta"];
      if (delta.contains("content")) p.text += delta["content"].get<std::string>();
      if (choice["finish_reason"].is_string()) p.finish = choice["finish_reason"];
      for (const auto& tc : delta.value("tool_calls", json::array())) {
        size_t i = tc["index"];
        if (p.calls.size() <= i) p.calls.resize(i + 1);
        if (tc.contains("id")) {
          p.calls[i].id = tc["id"];
          p.calls[i].name = tc["function"]["name"];
        }
        p.calls[i].arguments_text += tc["function"]["arguments"].get<std::string>();
      }
    }
  }
  return p;
}

Parsed ParseAnthropic(const std::vector<std::string>& events) {
  Parsed p;
  std::vector<std::string> block_types;
  for (const auto& [name, data] : SplitSse(Join(events))) {
    json ev = json::parse(data);
    EXPECT_EQ(ev["type"], name);
    if (name == "content_block_start") {
      EXPECT_EQ(ev["index"], block_types.size());
      block_types.push_back(ev["content_block"]["type"]);
      if (block_types.back() == "tool_use") {
        EXPECT_EQ(ev["content_block"]["input"], json::object());
        p.calls.push_back({ev["content_block"]["id"], ev["content_block"]["name"], ""});
      }
    } else if (name == "content_block_delta") {
      const json& d = ev["delta"];
      if (d["type"] == "text_delta") p.text += d["text"].get<std::string>();
      if (d["type"] == "input_json_delta") p.calls.back().arguments_text += d["partial_json"].get<std::string>();
    } else if (name == "message_delta") {
      p.finish = ev["delta"]["stop_reason"];
      p.output_tokens = ev["usage"]["output_tokens"];
    } else if (name == "message_stop") {
      p.done = true;
    }
  }
  return p;
}

MockTurn SampleTurn() {
  MockTurn t;
  t.text = "Héllo, wörld — ✓ checking the weather";
  t.calls.push_back({"call_1", "get_weather", R"({"city":"Oslo","unit":"°C"})"});
  t.calls.push_back({"call_2", "broken", R"({"city":"Os)"});  // deliberately invalid JSON
  t.output_tokens = 7;
  return t;
}

void ExpectSameCalls(const std::vector<MockCall>& got, const std::vector<MockCall>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].arguments_text, want[i].arguments_text);
  }
}

TEST(MockPayloadsTest, OpenAIStreamReassemblesToTheTurn) {
  MockTurn t = SampleTurn();
  for (size_t fragment : {size_t{0}, size_t{1}, size_t{4}, size_t{1000}}) {
    std::vector<std::string> events = OpenAIStream(t, fragment);
    Parsed p = ParseOpenAI(events);
    EXPECT_EQ(p.text, t.text) << fragment;
    ExpectSameCalls(p.calls, t.calls);
    EXPECT_EQ(p.finish, "tool_calls");
    EXPECT_EQ(p.output_tokens, 7);
    EXPECT_TRUE(p.done);
    EXPECT_EQ(events.back(), "data: [DONE]\n\n");
  }
  EXPECT_GT(OpenAIStream(t, 4).size(), t.text.size() / 7);  // really split
}

TEST(MockPayloadsTest, AnthropicStreamReassemblesToTheTurn) {
  MockTurn t = SampleTurn();
  for (size_t fragment : {size_t{0}, size_t{1}, size_t{4}, size_t{1000}}) {
    Parsed p = ParseAnthropic(AnthropicStream(t, fragment));
    EXPECT_EQ(p.text, t.text) << fragment;
    ExpectSameCalls(p.calls, t.calls);
    EXPECT_EQ(p.finish, "tool_use");
    EXPECT_EQ(p.output_tokens, 7);
    EXPECT_TRUE(p.done);
  }
  MockTurn plain;
  plain.text = "just text";
  Parsed p = ParseAnthropic(AnthropicStream(plain));
  EXPECT_EQ(p.text, "just text");
  EXPECT_EQ(p.finish, "end_turn");
  EXPECT_TRUE(p.calls.empty());
}

TEST(MockPayloadsTest, WholeResponsesCarryTextCallsAndUsage) {
  MockTurn t = SampleTurn();
  json oa = json::parse(OpenAIResponse(t));
  EXPECT_EQ(oa["object"], "chat.completion");
  EXPECT_EQ(oa["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(oa["choices"][0]["message"]["content"], t.text);
  EXPECT_EQ(oa["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"], t.calls[1].arguments_text);
  EXPECT_EQ(oa["usage"]["total_tokens"], 17);

  MockTurn no_text;
  no_text.calls = {t.calls[0]};
  EXPECT_TRUE(json::parse(OpenAIResponse(no_text))["choices"][0]["message"]["content"].is_null());
  EXPECT_EQ(json::parse(OpenAIResponse(MockTurn{"hi"}))["choices"][0]["finish_reason"], "stop");

  json an = json::parse(AnthropicResponse(t));
  EXPECT_EQ(an["stop_reason"], "tool_use");
  EXPECT_EQ(an["content"][0]["text"], t.text);
  EXPECT_EQ(an["content"][1]["input"]["city"], "Oslo");
  EXPECT_EQ(an["content"][2]["input"], json::object());  // invalid arguments
  EXPECT_EQ(an["usage"]["output_tokens"], 7);
}

TEST(MockPayloadsTest, ErrorBodies) {
  json oa = json::parse(OpenAIError("bad", "invalid_request_error", ""));
  EXPECT_EQ(oa["error"]["message"], "bad");
  EXPECT_TRUE(oa["error"]["param"].is_null());
  EXPECT_TRUE(oa["error"]["code"].is_null());
  json an = json::parse(AnthropicError("overloaded_error", "busy"));
  EXPECT_EQ(an["type"], "error");
  EXPECT_EQ(an["error"]["type"], "overloaded_error");
  EXPECT_EQ(an["error"]["message"], "busy");
  EXPECT_EQ(an["request_id"], "req_mock");
}

TEST(MockPayloadsTest, StreamServedThroughTheMockArrivesIntact) {
  MockUpstream server;
  std::vector<std::string> events = AnthropicStream(SampleTurn());
  server.Enqueue(MockUpstream::Sse(events));
  Client c(server.port());
  Response res = c.Call("POST", "/v1/messages");
  EXPECT_EQ(res.body(), Join(events));
}

}  // namespace
}  // namespace reins::testing

// The OpenAI and Anthropic providers end to end over real HTTP against the local mock
// upstream: every feature and every injected fault, then whole governed turns whose
// model is the mock, checking the session stays consistent when the model fails.
#include "model/http_model.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include <boost/asio/strand.hpp>

#include "config/agent_config_loader.h"
#include "domain/detail_log.h"
#include "net/io_threads.h"
#include "reins/runtime.h"
#include "support/mock_payloads.h"
#include "support/mock_upstream.h"
#include "support/run_sync.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

using testing::MockCall;
using testing::MockReply;
using testing::MockTurn;
using testing::MockUpstream;
using testing::RunSync;

constexpr const char* kKey = "sk-test-0123456789abcdef";

std::shared_ptr<const std::vector<ToolSpec>> WeatherTool() {
  return std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{
      {"get_weather", "Weather for a city",
       Json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})")}});
}

ModelRequest AskWeather(bool stream, std::string* deltas = nullptr) {
  ModelRequest r;
  r.messages = {Message::System("be brief"), Message::User("Weather in Oslo and Bergen?")};
  r.tools = WeatherTool();
  if (stream) {
    r.on_text_delta = [deltas](std::string_view piece) {
      if (deltas) deltas->append(piece);
    };
  }
  return r;
}

class HttpModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<HttpModel> Model(Json options = Json::object(), int max_retries = 3) {
    ModelConfig c;
    c.provider = GetParam();
    c.model = "test-model";
    c.base_url = provider() == "openai" ? up_.base_url() + "/v1" : up_.base_url();
    c.api_key = kKey;
    c.max_retries = max_retries;
    c.timeout_ms = 5000;
    options["retry_base_ms"] = 1;
    c.options = options;
    auto wire = provider() == "openai" ? MakeOpenAIWire() : MakeAnthropicWire();
    return std::make_unique<HttpModel>(c, std::move(wire), client_, std::make_shared<SystemClock>(), 7);
  }
  std::string provider() const { return GetParam(); }
  MockReply Whole(const MockTurn& t) {
    return MockUpstream::Json(200, provider() == "openai" ? testing::OpenAIResponse(t) : testing::AnthropicResponse(t));
  }
  MockReply Streamed(const MockTurn& t, size_t fragment = 3) {
    return MockUpstream::Sse(provider() == "openai" ? testing::OpenAIStream(t, fragment) : testing::AnthropicStream(t, fragment));
  }
  MockReply Error(int status, const std::string& message) {
    return MockUpstream::Json(status, provider() == "openai" ? testing::OpenAIError(message, "server_error", "x")
                                                             : testing::AnthropicError("api_error", message));
  }
  Result<ModelResponse> Complete(HttpModel& m, const ModelRequest& r) { return RunSync(m.Complete(r)); }
  // Half a streamed answer, then the connection closes; then an answer a retry would get.
  void EnqueueACutStreamThenAnAnswer() {
    std::vector<std::string> events = provider() == "openai" ? testing::OpenAIStream({"a long answer", {}}, 2)
                                                             : testing::AnthropicStream({"a long answer", {}}, 2);
    events.resize(events.size() / 2);
    MockReply cut = MockUpstream::Sse(events);
    cut.cut_after_chunks = true;
    up_.Enqueue(cut);
    up_.Enqueue(Whole({"must not be used", {}}));
  }

  MockUpstream up_;
  std::shared_ptr<HttpClient> client_ = std::make_shared<HttpClient>();
};

const MockTurn kTwoCalls{"Checking both.",
                         {{"call_1", "get_weather", R"({"city":"Oslo"})"}, {"call_2", "get_weather", R"({"city":"Bergen"})"}}};

TEST_P(HttpModelTest, SendsTheWireFormatAndParsesToolCalls) {
  up_.Enqueue(Whole(kTwoCalls));
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text, "Checking both.");
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[1].id, "call_2");
  EXPECT_EQ(r->tool_calls[1].args["city"], "Bergen");
  EXPECT_EQ(r->usage.input_tokens, 10);
  auto seen = up_.requests();
  ASSERT_EQ(seen.size(), 1u);
  Json body = Json::parse(seen[0].body);
  EXPECT_EQ(body["model"], "test-model");
  if (provider() == "openai") {
    EXPECT_EQ(seen[0].target, "/v1/chat/completions");
    EXPECT_EQ(seen[0].headers["authorization"], std::string("Bearer ") + kKey);
    EXPECT_EQ(body["tools"][0]["function"]["name"], "get_weather");
  } else {
    EXPECT_EQ(seen[0].target, "/v1/messages");
    EXPECT_EQ(seen[0].headers["x-api-key"], kKey);
    EXPECT_EQ(seen[0].headers["anthropic-version"], "2023-06-01");
    EXPECT_EQ(body["system"], "be brief");
  }
  EXPECT_FALSE(body.contains("stream") && body["stream"] == true);
}

TEST_P(HttpModelTest, StreamsTextDeltasAndAssemblesToolCalls) {
  MockTurn t = kTwoCalls;
  t.text = "Grüße aus Oslo 🙏 — checking both cities now.";
  up_.Enqueue(Streamed(t, 2));
  auto model = Model();
  std::string deltas;
  auto r = Complete(*model, AskWeather(true, &deltas));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text, t.text);
  EXPECT_EQ(deltas, t.text);
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[0].args["city"], "Oslo");
  EXPECT_EQ(r->tool_calls[1].args["city"], "Bergen");
  Json body = Json::parse(up_.requests()[0].body);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(up_.requests()[0].headers["accept"], "text/event-stream");
}

TEST_P(HttpModelTest, ReadsAStreamTheServerSentUnasked) {
  up_.Enqueue(Streamed(kTwoCalls));
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text, "Checking both.");
  EXPECT_EQ(r->tool_calls.size(), 2u);
}

TEST_P(HttpModelTest, RetriesA429HonouringRetryAfter) {
  up_.Enqueue(MockUpstream::Json(429, "{}", {{"retry-after-ms", "20"}}));
  up_.Enqueue(Whole({"ok", {}}));
  auto model = Model();
  auto start = std::chrono::steady_clock::now();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text, "ok");
  EXPECT_EQ(model->last_attempts(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

TEST_P(HttpModelTest, Retries500ThenSucceeds) {
  up_.Enqueue(Error(500, "boom"));
  up_.Enqueue(Error(529, "overloaded"));
  up_.Enqueue(Whole({"fine", {}}));
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(model->last_attempts(), 3);
  // Each try is built afresh (the first one's body went to the socket): the same bytes.
  const auto seen = up_.requests();
  ASSERT_EQ(seen.size(), 3u);
  for (const auto& retried : {seen[1], seen[2]}) {
    EXPECT_EQ(retried.body, seen[0].body);
    EXPECT_EQ(retried.headers, seen[0].headers);
    EXPECT_EQ(retried.target, seen[0].target);
  }
}

TEST_P(HttpModelTest, GivesUpAfterMaxRetriesWithAClearError) {
  for (int i = 0; i < 3; ++i) up_.Enqueue(Error(503, "try later"));
  auto model = Model(Json::object(), 2);
  auto r = Complete(*model, AskWeather(false));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find(provider() + ": HTTP 503"), std::string::npos) << m;
  EXPECT_NE(m.find("try later"), std::string::npos) << m;
  EXPECT_NE(m.find("after 3 attempts"), std::string::npos) << m;
}

TEST_P(HttpModelTest, NeverRetriesAClientErrorAndRedactsTheKey) {
  up_.Enqueue(Error(401, std::string("Incorrect API key provided: ") + kKey));
  up_.Enqueue(Whole({"should not be reached", {}}));
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(model->last_attempts(), 1);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("HTTP 401"), std::string::npos) << m;
  EXPECT_NE(m.find("Incorrect API key provided"), std::string::npos) << m;
  EXPECT_EQ(m.find("0123456789abcdef"), std::string::npos) << "the key leaked: " << m;
  EXPECT_NE(m.find("check the API key"), std::string::npos) << m;
}

// Issue 74, finding 5: a non-JSON upstream error body reached clients with internal host
// names, addresses and tokens (only URLs were stripped).
TEST_P(HttpModelTest, AnErrorBodyNotInTheProvidersFormatStaysInTheLog) {
  std::vector<std::string> details;
  SetDetailSink([&](std::string_view, std::string_view m) { details.emplace_back(m); });
  MockReply page;
  page.status = 400;
  page.headers = {{"Content-Type", "text/html"}};
  page.chunks = {"<html>gateway gw-7.corp.internal (10.2.3.4) refused; token=abc123</html>"};
  up_.Enqueue(page);
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  for (const char* secret : {"gw-7.corp.internal", "10.2.3.4", "abc123"}) EXPECT_EQ(m.find(secret), std::string::npos) << m;
  EXPECT_NE(m.find("HTTP 400"), std::string::npos) << m;
  EXPECT_NE(m.find("not in the provider's error format"), std::string::npos) << m;
  ASSERT_FALSE(details.empty());
  EXPECT_NE(details.back().find("gw-7.corp.internal"), std::string::npos) << details.back();
}

TEST_P(HttpModelTest, ErrorsNeverNameTheUpstreamUrlWhichGoesToTheDetailLog) {
  std::vector<std::string> details;
  SetDetailSink([&](std::string_view, std::string_view m) { details.emplace_back(m); });
  up_.Enqueue(Error(400, "model 'x' does not exist"));
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_FALSE(r.ok());
  const std::string port = std::to_string(up_.port());
  EXPECT_EQ(r.status().message().find(port), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(provider() + ": HTTP 400"), std::string::npos) << r.status().message();
  ASSERT_FALSE(details.empty());
  EXPECT_NE(details.back().find("127.0.0.1:" + port), std::string::npos) << details.back();
  // A provider that cannot be reached at all: the message says so, not where it is.
  ModelConfig c;
  c.provider = provider();
  c.model = "m";
  c.base_url = "http://127.0.0.1:1/v1";
  c.max_retries = 0;
  auto unreachable = MakeHttpModel(c, client_, std::make_shared<SystemClock>());
  ASSERT_TRUE(unreachable.ok());
  auto failed = RunSync((*unreachable)->Complete(AskWeather(false)));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message().find("127.0.0.1"), std::string::npos) << failed.status().message();
  EXPECT_NE(failed.status().message().find("the provider"), std::string::npos) << failed.status().message();
  SetDetailSink(nullptr);
}

TEST_P(HttpModelTest, RetriesAConnectionResetBeforeAnyByte) {
  MockReply drop;
  drop.close_without_reply = true;
  up_.Enqueue(drop);
  up_.Enqueue(Whole({"after reset", {}}));
  auto model = Model();
  auto r = Complete(*model, AskWeather(false));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text, "after reset");
}

// The client frees a request's head and body once written (the provider can build them
// again): a kept-alive connection the server drops unanswered gets the same bytes on a
// fresh one.
TEST_P(HttpModelTest, ResendsTheSameRequestWhenAReusedConnectionWasDropped) {
  MockReply drop;
  drop.close_without_reply = true;
  up_.Enqueue(Whole({"first", {}}));
  up_.Enqueue(drop);
  up_.Enqueue(Whole({"second", {}}));
  auto model = Model();
  ASSERT_TRUE(Complete(*model, AskWeather(false)).ok());
  auto r = Complete(*model, AskWeather(false));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text, "second");
  std::vector<testing::RecordedRequest> seen = up_.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[1].body.empty());
  EXPECT_EQ(seen[2].body, seen[1].body);
  EXPECT_EQ(seen[2].body, seen[0].body);
  EXPECT_EQ(seen[2].method, seen[1].method);
  EXPECT_EQ(seen[2].target, seen[1].target);
  EXPECT_EQ(seen[2].headers, seen[1].headers);  // the head built again, field for field
  EXPECT_FALSE(seen[2].headers.empty());
}

TEST_P(HttpModelTest, AStreamCutMidwayFailsWithoutRetrying) {
  EnqueueACutStreamThenAnAnswer();
  auto model = Model();
  std::string deltas;
  auto r = Complete(*model, AskWeather(true, &deltas));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kAborted) << r.status().ToString();
  EXPECT_NE(r.status().message().find(provider() + ":"), std::string::npos);
  EXPECT_FALSE(deltas.empty());
  EXPECT_EQ(up_.requests().size(), 1u);
}

TEST_P(HttpModelTest, AMalformedChunkFailsClearly) {
  std::vector<std::string> events = provider() == "openai" ? testing::OpenAIStream({"hello there", {}}, 3)
                                                           : testing::AnthropicStream({"hello there", {}}, 3);
  events.insert(events.begin() + 2, provider() == "openai" ? "data: {\"choices\":[{\"delta\":{\"content\":\"x\"\n\n"
                                                           : "event: content_block_delta\ndata: {not json}\n\n");
  up_.Enqueue(MockUpstream::Sse(events));
  auto model = Model();
  auto r = Complete(*model, AskWeather(true));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("malformed"), std::string::npos) << r.status().message();
  EXPECT_EQ(up_.requests().size(), 1u);
}

TEST_P(HttpModelTest, ToolArgumentsThatAreNotJsonAreMarkedNotFatal) {
  MockTurn t{"", {{"call_9", "get_weather", R"({"city": "Oslo)"}}};
  up_.Enqueue(Streamed(t));
  auto model = Model();
  auto r = Complete(*model, AskWeather(true));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_FALSE(r->tool_calls[0].args_valid);
  EXPECT_EQ(r->tool_calls[0].name, "get_weather");
}

TEST_P(HttpModelTest, ASlowFirstByteTimesOut) {
  MockReply slow = Whole({"late", {}});
  slow.first_byte_delay_ms = 3000;
  up_.Enqueue(slow);
  auto model = Model(Json{{"first_byte_timeout_ms", 100}});
  auto r = Complete(*model, AskWeather(false));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("first byte"), std::string::npos) << r.status().message();
}

TEST_P(HttpModelTest, AnEndlessStreamHitsTheTotalTimeout) {
  std::vector<std::string> events = provider() == "openai" ? testing::OpenAIStream({"never ends", {}}, 3)
                                                           : testing::AnthropicStream({"never ends", {}}, 3);
  events.resize(2);
  MockReply endless = MockUpstream::Sse(events);
  endless.endless = true;
  endless.chunk_delay_ms = 20;
  up_.Enqueue(endless);
  // timeout_ms bounds the whole exchange, however steadily the chunks arrive.
  auto model = [&] {
    ModelConfig cfg;
    cfg.provider = provider();
    cfg.model = "m";
    cfg.base_url = provider() == "openai" ? up_.base_url() + "/v1" : up_.base_url();
    cfg.timeout_ms = 300;
    return std::make_unique<HttpModel>(cfg, provider() == "openai" ? MakeOpenAIWire() : MakeAnthropicWire(), client_,
                                       std::make_shared<SystemClock>(), 1);
  }();
  auto r = Complete(*model, AskWeather(true));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
}

// reins serve --threads 2: a turn on a strand of a context two threads run, declared
// so, makes `requests` one after another; a streamed one is then read on a strand of its
// own. `off_strand` counts the text deltas that reached the turn anywhere but on its
// strand. Empty when something threw (in `thrown`).
std::vector<Result<ModelResponse>> CompleteInATurnOnTwoThreads(HttpModel& model, std::vector<ModelRequest> requests,
                                                               std::string* deltas, int* off_strand,
                                                               std::exception_ptr* thrown = nullptr) {
  boost::asio::io_context io(2);
  DeclareIoThreads(io, 2);
  auto turn_strand = boost::asio::make_strand(io);
  for (ModelRequest& request : requests) {
    if (!request.on_text_delta) continue;
    request.on_text_delta = [&, deliver = std::move(request.on_text_delta)](std::string_view piece) {
      if (!turn_strand.running_in_this_thread()) ++*off_strand;
      deltas->append(piece);
      deliver(piece);
    };
  }
  std::vector<Result<ModelResponse>> out;
  std::exception_ptr failed;
  boost::asio::co_spawn(
      turn_strand,
      [&]() -> Task<void> {
        for (const ModelRequest& request : requests) {
          Result<ModelResponse> answer = co_await model.Complete(request);
          out.push_back(std::move(answer));
        }
      },
      [&](std::exception_ptr e) { failed = e; });
  std::thread second([&io] { io.run(); });
  io.run();
  second.join();
  if (thrown != nullptr) *thrown = failed;
  if (failed) out.clear();
  return out;
}

Result<ModelResponse> CompleteOnTwoThreads(HttpModel& model, ModelRequest request, std::string* deltas,
                                           int* off_strand, std::exception_ptr* thrown = nullptr) {
  std::vector<ModelRequest> one;
  one.push_back(std::move(request));
  std::vector<Result<ModelResponse>> out = CompleteInATurnOnTwoThreads(model, std::move(one), deltas, off_strand, thrown);
  if (out.empty()) return Internal("threw");
  return std::move(out.front());
}

TEST_P(HttpModelTest, OnSeveralThreadsTheStreamIsReadOffTheTurnsStrandAndItsTextArrivesOnItInOrder) {
  MockTurn t = kTwoCalls;
  t.text = "Grüße aus Oslo 🙏 — checking both cities now. The first one is Oslo, then Bergen, in that order.";
  up_.Enqueue(Streamed(t, 1));  // a chunk per character: many hand-offs
  auto model = Model();
  // The turn is slow to take the first piece: meanwhile the stream is read on, and what
  // arrived comes in one hand-off rather than a piece per chunk.
  ModelRequest request = AskWeather(true);
  int pieces = 0;
  request.on_text_delta = [&pieces](std::string_view) {
    if (pieces++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  std::string deltas;
  int off_strand = 0;
  auto r = CompleteOnTwoThreads(*model, std::move(request), &deltas, &off_strand);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(deltas, t.text);
  EXPECT_EQ(r->text, t.text);
  EXPECT_EQ(off_strand, 0);
  EXPECT_LT(pieces, 10) << "a piece per chunk: the stream was read on the turn's strand";
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[1].args["city"], "Bergen");
}

// The connection a stream opened on its own strand goes back to the pool and serves the
// turn's next calls, whole or streamed, on whichever strand makes them.
TEST_P(HttpModelTest, OnSeveralThreadsTheConnectionAStreamOpenedServesTheTurnsNextCalls) {
  up_.Enqueue(Streamed({"First streamed answer.", {}}, 2));
  up_.Enqueue(Whole({"A whole answer.", {}}));
  up_.Enqueue(Streamed({"Second streamed answer.", {}}, 2));
  auto model = Model();
  std::vector<ModelRequest> calls;
  calls.push_back(AskWeather(true));
  calls.push_back(AskWeather(false));
  calls.push_back(AskWeather(true));
  std::string deltas;
  int off_strand = 0;
  std::vector<Result<ModelResponse>> r = CompleteInATurnOnTwoThreads(*model, std::move(calls), &deltas, &off_strand);
  ASSERT_EQ(r.size(), 3u);
  for (const auto& one : r) ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(r[0]->text, "First streamed answer.");
  EXPECT_EQ(r[1]->text, "A whole answer.");
  EXPECT_EQ(r[2]->text, "Second streamed answer.");
  EXPECT_EQ(deltas, "First streamed answer.Second streamed answer.");
  EXPECT_EQ(off_strand, 0);
  EXPECT_EQ(client_->connections_opened(), 1);
}

TEST_P(HttpModelTest, OnSeveralThreadsACutStreamFailsWithTheTextSoFarDeliveredAndNoRetry) {
  EnqueueACutStreamThenAnAnswer();
  auto model = Model();
  std::string deltas;
  int off_strand = 0;
  auto r = CompleteOnTwoThreads(*model, AskWeather(true), &deltas, &off_strand);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kAborted) << r.status().ToString();
  EXPECT_FALSE(deltas.empty());
  EXPECT_EQ(off_strand, 0);
  EXPECT_EQ(up_.requests().size(), 1u);
}

TEST_P(HttpModelTest, OnSeveralThreadsWhatTheTurnThrowsOnADeltaReachesTheTurn) {
  up_.Enqueue(Streamed({"Hello there, this is a streamed answer.", {}}, 2));
  auto model = Model();
  ModelRequest r = AskWeather(true);
  r.on_text_delta = [](std::string_view) { throw std::runtime_error("the reply stream failed"); };
  std::string deltas;
  int off_strand = 0;
  std::exception_ptr thrown;
  (void)CompleteOnTwoThreads(*model, std::move(r), &deltas, &off_strand, &thrown);
  ASSERT_TRUE(thrown);
  EXPECT_THROW(std::rethrow_exception(thrown), std::runtime_error);
}

INSTANTIATE_TEST_SUITE_P(Providers, HttpModelTest, ::testing::Values("openai", "anthropic"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace reins

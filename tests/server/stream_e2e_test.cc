// Governed streaming end to end (docs/streaming.md): the real `reins serve` against a
// mock upstream that streams its answer slowly, in both wire formats, with the care
// rails on. The reply's sentences reach the client while the model is still writing,
// each already judged (an opener put before a result-first sentence, an internal name
// replaced); a correction is appended, never a retraction; the deltas add up to the
// stored reply; a client that hangs up mid-reply leaves a completed, stored turn.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "net/http_client.h"
#include "net/sse.h"
#include "reins/json.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/mock_payloads.h"
#include "support/mock_upstream.h"
#include "support/run_sync.h"

namespace reins {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::Call;
using testing::MockReply;
using testing::MockTurn;
using testing::MockUpstream;
using testing::Reply;
using testing::RunSync;
using testing::ServerProcess;

constexpr const char* kAnswer =
    "I've submitted your prayer request. I used submit_prayer_request for it. "
    "I also scheduled a callback for you. Take care of yourself.";

struct TimedEvent {
  std::string event;
  Json data;
  double at_ms;  // since the request was sent
};

class StreamE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool openai() const { return GetParam() == "openai"; }
  std::vector<std::string> Stream(const MockTurn& t, size_t fragment) const {
    return openai() ? testing::OpenAIStream(t, fragment) : testing::AnthropicStream(t, fragment);
  }

  // The model first queues the prayer request, then writes its answer 8 bytes every
  // 40 ms (about 0.8 s in all, the pace of a real model).
  void Start(std::vector<std::string> serve_flags = {}) {
    up_.Enqueue(MockUpstream::Sse(Stream({"", {{"call_1", "submit_prayer_request", R"({"request":"for my mother"})"}}}, 0)));
    MockReply slow = MockUpstream::Sse(Stream({kAnswer, {}}, 8));
    slow.chunk_delay_ms = 40;
    up_.Enqueue(slow);
    const std::string base = openai() ? up_.base_url() + "/v1" : up_.base_url();
    agent_ = (fs::path(::testing::TempDir()) / ("reins-stream-" + std::to_string(getpid()) + "-" + GetParam() + ".yaml")).string();
    std::ofstream(agent_) << "name: care-stream\n"
                          << "model: { provider: " << GetParam() << ", model: m, api_key: sk-test, base_url: \"" << base
                          << "\", max_retries: 0 }\n"
                          << R"(deferred: { mode: await, timeout_ms: 2000 }
tools:
  - name: submit_prayer_request
    title: prayer request
    timing: deferred
    deferred_instruction: QUEUED - lead with empathy.
    input_schema: { type: object, properties: { request: { type: string } }, required: [request] }
    backend: { fixture: [ { result: { success: true, data: { id: pr_1 } } } ] }
  - name: schedule_callback
    title: callback
    input_schema: { type: object }
    backend: { fixture: [ { result: { success: true } } ] }
rails:
  empathy_first:
    openers: ["I'm so sorry you're going through this."]
  no_internal_names: {}
  honest_claims: {}
)";
    serve_flags.insert(serve_flags.begin(), {"--config", agent_});
    server_ = std::make_unique<ServerProcess>(serve_flags);
    ASSERT_GT(server_->port(), 0) << server_->first_line() << server_->Log();
    Reply created = Call("POST", url("/v1/sessions"), "{}");
    ASSERT_EQ(created.status, 201) << created.body.dump();
    session_ = created.body.value("session_id", "");
  }
  void TearDown() override { std::remove(agent_.c_str()); }
  std::string url(const std::string& path) const { return server_->base_url() + path; }

  // Streams one turn; `hang_up_after` stops reading after the first event of that name.
  std::vector<TimedEvent> StreamTurn(const std::string& say, const std::string& hang_up_after = "") {
    HttpClient client;
    HttpRequest r;
    r.url = url("/v1/sessions/" + session_ + "/turns");
    r.body = Json{{"speaker", "user"}, {"say", say}}.dump();
    r.headers.push_back({"Accept", "text/event-stream"});
    SseParser parser;
    std::vector<TimedEvent> events;
    const auto start = Clock::now();
    auto out = RunSync(client.Stream(r, [&](std::string_view bytes) {
      bool stop = false;
      parser.Feed(bytes, [&](SseEvent&& e) {
        const double at = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        stop = stop || (!hang_up_after.empty() && e.event == hang_up_after);
        events.push_back({e.event, Json::parse(e.data, nullptr, false), at});
      });
      return stop ? Aborted("hanging up") : OkStatus();
    }));
    if (hang_up_after.empty()) {
      EXPECT_TRUE(out.ok()) << out.status().message();
    }
    return events;
  }

  // The session's turns as stored, once `count` of them are there (a minute at most).
  Json StoredTurns(size_t count) {
    Json trace;
    for (int i = 0; i < 1200; ++i) {
      trace = Call("GET", url("/v1/sessions/" + session_ + "/trace")).body;
      if (trace["turns"].size() >= count) break;
      usleep(50000);
    }
    return trace["turns"];
  }

  MockUpstream up_;
  std::string agent_;
  std::unique_ptr<ServerProcess> server_;
  std::string session_;
};

size_t IndexOf(const std::vector<TimedEvent>& events, const std::string& name) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].event == name) return i;
  }
  return events.size();
}

// The stream of the turn Start() sets up, as the contract and the rails want it.
void ExpectGovernedSentences(const std::vector<TimedEvent>& events, const Json& stored_turns) {
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().event, "turn.started");
  EXPECT_EQ(events.front().data["reply"]["stream"], "sentences") << events.front().data.dump();
  EXPECT_EQ(events.back().event, "turn.completed");

  std::vector<const TimedEvent*> deltas;
  std::string streamed;
  for (const TimedEvent& e : events) {
    if (e.event != "reply.delta") continue;
    deltas.push_back(&e);
    streamed += e.data.value("text", "");
  }
  ASSERT_GE(deltas.size(), 4u) << streamed;
  // The first sentence reached the client long before the model finished its answer
  // (the rest of it took at least another ~0.5 s to arrive).
  const size_t final_at = IndexOf(events, "reply.final");
  ASSERT_LT(final_at, events.size());
  EXPECT_GT(events[final_at].at_ms - deltas.front()->at_ms, 300.0)
      << "first delta at " << deltas.front()->at_ms << " ms, reply.final at " << events[final_at].at_ms << " ms";
  // Judged before it was sent: the result-first opener got its acknowledgement, the
  // internal name its title.
  EXPECT_EQ(deltas.front()->data.value("text", ""), "I'm so sorry you're going through this. I've submitted your prayer request.");
  EXPECT_EQ(streamed.find("submit_prayer_request"), std::string::npos) << streamed;
  EXPECT_NE(streamed.find("I used prayer request for it."), std::string::npos) << streamed;
  // The unperformed callback claim went out as the model wrote it; the correction is
  // appended as its own last delta.
  EXPECT_NE(deltas.back()->data.value("text", "").find("I was not able to complete the callback"),
            std::string::npos)
      << streamed;
  // The contract's order: progress, the reply's deltas, the final reply, the deferred
  // write, the end.
  EXPECT_LT(IndexOf(events, "tool.finished"), IndexOf(events, "reply.delta"));
  EXPECT_LT(IndexOf(events, "reply.delta"), final_at);
  EXPECT_LT(final_at, IndexOf(events, "deferred.finished"));
  EXPECT_EQ(events[final_at].data.value("text", ""), streamed);
  // Stored: exactly what the client received.
  EXPECT_EQ(events.back().data.value("reply", ""), streamed);
  ASSERT_EQ(stored_turns.size(), 1u);
  EXPECT_EQ(stored_turns[0].value("reply", ""), streamed);
}

TEST_P(StreamE2eTest, SentencesArriveJudgedWhileTheModelIsStillWriting) {
  Start();
  std::vector<TimedEvent> events = StreamTurn("Please pray for my mother, she is in the hospital.");
  ExpectGovernedSentences(events, StoredTurns(1));
}

// On two event loops (each turn on its connection's loop: docs/architecture.md
// "Concurrency") the person gets the same judged sentences as on one.
TEST_P(StreamE2eTest, OnTwoThreadsTheSameJudgedSentencesArrive) {
  Start({"--threads", "2"});
  std::vector<TimedEvent> events = StreamTurn("Please pray for my mother, she is in the hospital.");
  ExpectGovernedSentences(events, StoredTurns(1));
}

TEST_P(StreamE2eTest, AClientThatHangsUpMidReplyLeavesACompletedStoredTurn) {
  Start();
  std::vector<TimedEvent> events = StreamTurn("Please pray for my mother.", "reply.delta");
  ASSERT_EQ(events.back().event, "reply.delta");
  Json turns = StoredTurns(1);
  ASSERT_EQ(turns.size(), 1u) << turns.dump();
  EXPECT_EQ(turns[0]["status"], "completed");
  const std::string reply = turns[0].value("reply", "");
  EXPECT_EQ(reply.rfind(events.back().data.value("text", ""), 0), 0u) << reply;
  EXPECT_NE(reply.find("Take care of yourself."), std::string::npos) << "the turn went on to its end: " << reply;
}

INSTANTIATE_TEST_SUITE_P(WireFormats, StreamE2eTest, ::testing::Values("openai", "anthropic"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace reins

// Whole governed turns whose model is a real wire format over HTTP (the mock upstream
// speaking OpenAI Chat Completions): the history serialises with the pairing rules
// (I10), deferred results stay hidden (I4), and a failing model leaves the session
// consistent: the turn is recorded as failed, nothing half-written, the next turn works.
// Every request's body is also written without the session's HistoryText and must be
// the same bytes (SameBodyCheck), whatever the turns did to the history.
#include <gtest/gtest.h>

#include <chrono>

#include "config/agent_config_loader.h"
#include "domain/history_text.h"
#include "model/http_model.h"
#include "model/wire_format.h"
#include "reins/runtime.h"
#include "support/mock_payloads.h"
#include "support/mock_upstream.h"
#include "support/run_sync.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

using testing::MockUpstream;
using testing::OpenAIResponse;
using testing::RunSync;

constexpr const char* kAgent = R"(name: care
system_prompt: You are the care team's assistant.
model: { provider: openai, model: test-model, api_key: sk-unit-test }
deferred: { mode: await, timeout_ms: 1000 }
tools:
  - name: save_prayer
    timing: deferred
    deferred_instruction: QUEUED - lead with empathy.
    input_schema: { type: object, properties: { request: { type: string } }, required: [request] }
  - name: service_times
    input_schema: { type: object }
)";

// In front of the HTTP model: writes each request's body as the wire format does with
// the session's HistoryText and again without it, and expects the same bytes.
class SameBodyCheck : public ModelProvider {
 public:
  SameBodyCheck(std::shared_ptr<ModelProvider> inner, ModelConfig config)
      : inner_(std::move(inner)),
        config_(std::move(config)),
        wire_(config_.provider == "openai" ? MakeOpenAIWire() : MakeAnthropicWire()) {}
  std::string_view Name() const override { return inner_->Name(); }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override {
    ModelRequest plain = request;
    plain.history_text = nullptr;
    EXPECT_EQ(wire_->BuildBody(config_, request, false), wire_->BuildBody(config_, plain, false));
    if (request.history_text != nullptr && request.history_text->messages() > 0) ++reused;
    co_return co_await inner_->Complete(request);
  }
  int reused = 0;  // calls whose earlier messages' text was kept from an earlier call

 private:
  std::shared_ptr<ModelProvider> inner_;
  ModelConfig config_;
  std::unique_ptr<WireFormat> wire_;
};

class ProviderTurnTest : public ::testing::Test {
 protected:
  void SetUp() override { Start("openai"); }
  void Start(const std::string& provider) {
    config_ = AgentConfig{};
    Diagnostics diag;
    LocatedDoc doc = ParseYaml(kAgent, "agent.yaml", diag);
    ASSERT_TRUE(ParseAgentConfig(doc, "", ".", diag, &config_)) << diag.Format();
    config_.model.provider = provider;
    config_.model.base_url = provider == "openai" ? up_.base_url() + "/v1" : up_.base_url();
    config_.model.max_retries = 0;
    auto clock = std::make_shared<SystemClock>();
    auto model = MakeHttpModel(config_.model, std::make_shared<HttpClient>(), clock);
    ASSERT_TRUE(model.ok()) << model.status().message();
    check_ = std::make_shared<SameBodyCheck>(*model, config_.model);
    RuntimeParts parts;
    parts.model = check_;
    parts.clock = clock;
    parts.store = OpenStore("sqlite::memory:").value();
    saves_ = std::make_shared<FixtureBackend>("save_prayer", Json::parse(R"([{"result": {"success": true, "data": {"id": "pr_secret_42"}}}])"), *clock);
    parts.tool_backends["save_prayer"] = saves_;
    parts.tool_backends["service_times"] = std::make_shared<FixtureBackend>(
        "service_times", Json::parse(R"([{"repeat": true, "result": {"times": ["9:00", "11:00"]}}])"), *clock);
    runtime_ = Runtime::Create(config_, parts).value();
    session_ = runtime_->CreateSession().value();
  }
  Result<TurnResult> Say(const std::string& text) {
    TurnInput in;
    in.say = text;
    return RunSync(runtime_->RunTurn(session_, std::move(in)));
  }

  MockUpstream up_;
  AgentConfig config_;
  std::shared_ptr<SameBodyCheck> check_;
  std::shared_ptr<FixtureBackend> saves_;
  std::unique_ptr<Runtime> runtime_;
  std::string session_;
};

TEST_F(ProviderTurnTest, AGovernedTurnOverTheWire) {
  up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"", {{"call_a", "save_prayer", R"({"request":"for my mother"})"},
                                                          {"call_b", "service_times", "{}"}}})));
  up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"I'm so sorry. Services are at 9 and 11.", {}})));
  auto r = Say("Please pray for my mother. When is service?");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted) << r->error;
  EXPECT_EQ(r->reply, "I'm so sorry. Services are at 9 and 11.");
  EXPECT_EQ(saves_->calls(), 1);

  auto seen = up_.requests();
  ASSERT_EQ(seen.size(), 2u);
  Json second = Json::parse(seen[1].body);
  const Json& messages = second["messages"];
  // system, user, assistant(tool_calls a, b), tool a, tool b — in that order (I10).
  ASSERT_EQ(messages.size(), 5u) << messages.dump(2);
  EXPECT_EQ(messages[0]["role"], "system");
  EXPECT_EQ(messages[2]["role"], "assistant");
  EXPECT_EQ(messages[2]["tool_calls"][0]["id"], "call_a");
  EXPECT_EQ(messages[3]["tool_call_id"], "call_a");
  EXPECT_EQ(messages[3]["content"], "QUEUED - lead with empathy.");
  EXPECT_EQ(messages[4]["tool_call_id"], "call_b");
  EXPECT_EQ(second.dump().find("pr_secret_42"), std::string::npos) << "a deferred result reached the model (I4)";
}

TEST_F(ProviderTurnTest, AnthropicKeepsResultsInOneUserTurnAfterTheCalls) {
  Start("anthropic");
  up_.Enqueue(MockUpstream::Json(200, testing::AnthropicResponse({"Let me help.", {{"toolu_a", "save_prayer", R"({"request":"for my mother"})"},
                                                                                   {"toolu_b", "service_times", "{}"}}})));
  up_.Enqueue(MockUpstream::Json(200, testing::AnthropicResponse({"I'm so sorry. Services are at 9 and 11.", {}})));
  auto r = Say("Please pray for my mother. When is service?");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted) << r->error;
  EXPECT_EQ(saves_->calls(), 1);
  Json second = Json::parse(up_.requests()[1].body);
  const Json& messages = second["messages"];
  // user, assistant(text, tool_use a, tool_use b), user(tool_result a, tool_result b) (I10).
  ASSERT_EQ(messages.size(), 3u) << messages.dump(2);
  EXPECT_EQ(second["system"], "You are the care team's assistant.");
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"][1]["id"], "toolu_a");
  EXPECT_EQ(messages[1]["content"][2]["id"], "toolu_b");
  EXPECT_EQ(messages[2]["role"], "user");
  EXPECT_EQ(messages[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(messages[2]["content"][0]["tool_use_id"], "toolu_a");
  EXPECT_EQ(messages[2]["content"][1]["tool_use_id"], "toolu_b");
  EXPECT_EQ(second.dump().find("pr_secret_42"), std::string::npos) << "a deferred result reached the model (I4)";
}

TEST_F(ProviderTurnTest, AFailingModelLeavesTheSessionConsistent) {
  up_.Enqueue(MockUpstream::Json(400, testing::OpenAIError("messages: bad request", "invalid_request_error", "bad")));
  auto failed = Say("Please pray for my mother.");
  ASSERT_TRUE(failed.ok()) << failed.status().message();
  EXPECT_EQ(failed->status, TurnStatus::kFailed);
  EXPECT_NE(failed->error.find("HTTP 400"), std::string::npos) << failed->error;
  EXPECT_EQ(saves_->calls(), 0);
  EXPECT_TRUE(runtime_->store().LoadOutbox(session_)->empty());
  auto turns = runtime_->store().LoadTurns(session_);
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 1u);

  // The connection drops on the turn's second model call, after a write was queued:
  // the turn fails and the queued write is withdrawn, not run behind a failure reply.
  up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"", {{"call_c", "save_prayer", R"({"request":"x"})"}}})));
  testing::MockReply drop;
  drop.close_without_reply = true;
  up_.Enqueue(drop);
  auto cut = Say("Please pray for my mother.");
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->status, TurnStatus::kFailed);
  EXPECT_EQ(saves_->calls(), 0) << "a queued write ran although the turn failed";

  // The session goes on: history holds only whole exchanges (I10 on the next request).
  up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"Of course.", {}})));
  auto next = Say("Thank you");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->status, TurnStatus::kCompleted) << next->error;
  Json last = Json::parse(up_.requests().back().body);
  for (size_t i = 0; i < last["messages"].size(); ++i) {
    const Json& m = last["messages"][i];
    if (m["role"] != "assistant" || !m.contains("tool_calls")) continue;
    for (size_t k = 0; k < m["tool_calls"].size(); ++k) {
      ASSERT_LT(i + 1 + k, last["messages"].size());
      EXPECT_EQ(last["messages"][i + 1 + k]["tool_call_id"], m["tool_calls"][k]["id"]) << last.dump(2);
    }
  }
  // The failure notes and the withdrawn write changed messages already written: the
  // last call's earlier messages were kept, and written again where they changed.
  EXPECT_GT(check_->reused, 0);
}

// A long session's earlier turns are written once for all its calls, and what no call
// can see any more leaves the kept text too (CachedSession::Trim): the bodies stay
// the same as the history's own, turn after turn, up to the context limit and past it
// (where a call sends a window of the history, written whole: FitContext).
TEST_F(ProviderTurnTest, ALongSessionsEarlierTurnsAreWrittenOnce) {
  config_.max_context_chars = 6000;
  runtime_.reset();
  {
    auto clock = std::make_shared<SystemClock>();
    RuntimeParts parts;
    parts.model = check_;
    parts.clock = clock;
    parts.store = OpenStore("sqlite::memory:").value();
    parts.tool_backends["service_times"] = std::make_shared<FixtureBackend>(
        "service_times", Json::parse(R"([{"repeat": true, "result": {"times": ["9:00", "11:00"]}}])"), *clock);
    runtime_ = Runtime::Create(config_, parts).value();
    session_ = runtime_->CreateSession().value();
  }
  const std::string padding(150, 'x');
  for (int i = 0; i < 30; ++i) {
    const std::string id = "call_" + std::to_string(i);
    up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"", {{id, "service_times", "{}"}}})));
    up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"Services are at 9 and 11. " + padding, {}})));
    auto r = Say("When is service? (" + std::to_string(i) + ") " + padding);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->status, TurnStatus::kCompleted) << r->error;
  }
  EXPECT_GT(check_->reused, 10);
  Json last = Json::parse(up_.requests().back().body);
  EXPECT_LT(last["messages"].size(), 4u * 30) << "older turns were left out";
  EXPECT_LT(last.dump().find("(29)"), std::string::npos);
}

TEST_F(ProviderTurnTest, AModelCallPastTheTurnsDeadlineIsAbortedAndTheTurnFailsHonestly) {
  config_.turn_timeout_ms = 1000;  // also the next turn's: a margin for a busy machine
  runtime_.reset();
  {
    auto clock = std::make_shared<SystemClock>();
    RuntimeParts parts;
    parts.model = MakeHttpModel(config_.model, std::make_shared<HttpClient>(), clock).value();
    parts.clock = clock;
    parts.store = OpenStore("sqlite::memory:").value();
    runtime_ = Runtime::Create(config_, parts).value();
    session_ = runtime_->CreateSession().value();
  }
  testing::MockReply slow = MockUpstream::Json(200, OpenAIResponse({"far too late", {}}));
  slow.first_byte_delay_ms = 10000;
  up_.Enqueue(slow);
  const auto start = std::chrono::steady_clock::now();
  auto r = Say("hello?");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kFailed);
  EXPECT_NE(r->error.find("limits.turn_timeout_ms = 1000 ms"), std::string::npos) << r->error;
  EXPECT_LT(took, std::chrono::milliseconds(8000)) << "the exchange was aborted, not waited out";
  up_.Enqueue(MockUpstream::Json(200, OpenAIResponse({"Hello.", {}})));
  auto next = Say("hello again");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->reply, "Hello.") << "the session stays usable";
}

}  // namespace
}  // namespace reins

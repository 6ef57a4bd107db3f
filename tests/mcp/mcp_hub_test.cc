// The hub between the runtime and the MCP servers: tools exposed from a server, calls
// from another io_context (the runtime's) crossing to the hub's thread and back,
// progress delivered on the caller's side, a caller's cancellation reaching the server
// as notifications/cancelled, and Stop() reaping the server.
#include "mcp/mcp_hub.h"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include "drive.h"
#include "fake_agent.h"
#include "mcp/elicitation.h"
#include "reins/envelope.h"

namespace reins {
namespace {

using testing::Drive;

using namespace boost::asio::experimental::awaitable_operators;

// GCC 12 rejects string literals in an expression that also co_awaits: names as constants.
const std::string kEcho = "echo";
const std::string kProgress = "progress";
const std::string kSlow = "slow";
const std::string kCancelled = "cancelled";
const std::string kAsk = "ask";

AgentConfig FakeAgent() { return testing::FakeAgent("hub-test"); }

Task<void> Wait(int ms) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(boost::asio::use_awaitable);
}

TEST(McpHubTest, CallsCrossToTheHubAndBackWithProgressAndCancellation) {
  AgentConfig config = FakeAgent();
  McpHub hub;
  ASSERT_TRUE(McpHub::Needed(config));
  Status started = hub.Start(config);
  ASSERT_TRUE(started.ok()) << started.message();
  EXPECT_NE(config.FindTool("echo"), nullptr);  // expose: all
  SystemClock clock;
  auto backends = hub.Backends(config, clock);
  ASSERT_TRUE(backends.count("progress"));

  boost::asio::io_context runtime;  // the caller's side, as the runtime's io_context
  Drive(runtime, [&]() -> Task<void> {
    ToolRequest echo{"echo", Json{{"message", "hi"}}, "s1", "t1", "k1"};
    Result<Json> echoed = co_await backends.at(kEcho)->Invoke(echo);
    EXPECT_TRUE(echoed.ok()) << echoed.status().message();

    std::vector<Json> progress;
    ToolRequest slow_progress{"progress", Json::object(), "s1", "t1", "k2"};
    slow_progress.on_progress = [&](const Json& p) { progress.push_back(p); };
    Result<Json> done = co_await backends.at(kProgress)->Invoke(slow_progress);
    EXPECT_TRUE(done.ok()) << done.status().message();
    EXPECT_EQ(progress.size(), 2u);  // delivered on this io_context, before the result

    // A deferred call's timeout: the caller gives up, the server hears of it.
    ToolRequest slow{"slow", Json{{"ms", 5000}}, "s1", "t1", "k3"};
    auto raced = co_await (backends.at(kSlow)->Invoke(slow) || Wait(300));
    EXPECT_EQ(raced.index(), 1u);
    ToolRequest ask{"cancelled", Json::object(), "s1", "t1", "k4"};
    Result<Json> cancelled = co_await backends.at(kCancelled)->Invoke(ask);
    EXPECT_TRUE(cancelled.ok()) << cancelled.status().message();
    if (cancelled.ok()) {
      EXPECT_EQ((*cancelled)["data"]["ids"].size(), 1u) << cancelled->dump();
    }
  });
  hub.Stop();
  ToolRequest after{"echo", Json::object(), "s1", "t2", "k5"};
  Drive(runtime, [&]() -> Task<void> {
    Result<Json> refused = co_await backends.at(kEcho)->Invoke(after);
    EXPECT_FALSE(refused.ok());
  });
}

// An immediate call's budget (its tool's timeout_ms, or what is left of the turn) is
// enforced by the MCP call itself, in real time: the call fails at the budget, and the
// server hears notifications/cancelled for it.
TEST(McpHubTest, ACallStopsAtItsBudgetAndTheServerHearsOfIt) {
  AgentConfig config = FakeAgent();
  McpHub hub;
  Status started = hub.Start(config);
  ASSERT_TRUE(started.ok()) << started.message();
  SystemClock clock;
  auto backends = hub.Backends(config, clock);
  boost::asio::io_context runtime;
  Drive(runtime, [&]() -> Task<void> {
    ToolRequest slow{"slow", Json{{"ms", 5000}}, "s1", "t1", "k1"};
    slow.timeout_ms = 300;
    const auto start = std::chrono::steady_clock::now();
    Result<Json> late = co_await backends.at(kSlow)->Invoke(slow);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, std::chrono::milliseconds(3000)) << "the call waited for the server, not its budget";
    const bool failed = !late.ok() || !(*late).value("success", true);
    EXPECT_TRUE(failed) << (late.ok() ? late->dump() : late.status().message());
    ToolRequest ask{"cancelled", Json::object(), "s1", "t1", "k2"};
    Result<Json> cancelled = co_await backends.at(kCancelled)->Invoke(ask);
    EXPECT_TRUE(cancelled.ok()) << cancelled.status().message();
    if (cancelled.ok()) {
      EXPECT_EQ((*cancelled)["data"]["ids"].size(), 1u) << cancelled->dump();
    }
  });
  hub.Stop();
}

// The fake's `ask` tool elicits {color: red|blue} and returns the answer it got.
TEST(McpHubTest, AnElicitationParksTheCallUntilThePersonAnswers) {
  AgentConfig config = FakeAgent();
  McpHub hub;
  Status started = hub.Start(config);
  ASSERT_TRUE(started.ok()) << started.message();
  SystemClock clock;
  auto backends = hub.Backends(config, clock);
  boost::asio::io_context runtime;
  Drive(runtime, [&]() -> Task<void> {
    ToolRequest ask{"ask", Json::object(), "s1", "t1", "k1"};
    ask.may_ask = true;
    Result<Json> asked = co_await backends.at(kAsk)->Invoke(ask);
    EXPECT_TRUE(asked.ok()) << asked.status().message();
    if (asked.ok()) {
      EXPECT_EQ((*asked)["next_action"], "clarification_needed") << asked->dump();
      EXPECT_EQ((*asked)["clarification"]["options"].size(), 2u);
    }
    ToolRequest resume{"ask", Json::object(), "s1", "t2", "k2"};
    resume.may_ask = true;
    resume.answer = Json{{"color", "blue"}};
    Result<Json> answered = co_await backends.at(kAsk)->Invoke(resume);
    EXPECT_TRUE(answered.ok()) << answered.status().message();
    if (answered.ok()) {
      EXPECT_EQ((*answered)["data"], Json::parse(R"({"action":"accept","content":{"color":"blue"}})")) << answered->dump();
    }

    // A deferred call cannot ask: the server hears decline.
    ToolRequest deferred{"ask", Json::object(), "s2", "t3", "k3"};
    Result<Json> declined = co_await backends.at(kAsk)->Invoke(deferred);
    EXPECT_TRUE(declined.ok());
    if (declined.ok()) {
      EXPECT_EQ((*declined)["data"]["action"], "decline") << declined->dump();
    }

    // The session moves on to another call: the open question is cancelled, and an
    // answer arriving after that is refused instead of sent.
    ToolRequest again{"ask", Json::object(), "s3", "t4", "k4"};
    again.may_ask = true;
    Result<Json> parked = co_await backends.at(kAsk)->Invoke(again);
    EXPECT_TRUE(parked.ok());
    ToolRequest other{"echo", Json{{"message", "something else"}}, "s3", "t5", "k5"};
    Result<Json> moved_on = co_await backends.at(kEcho)->Invoke(other);
    EXPECT_TRUE(moved_on.ok());
    ToolRequest late{"ask", Json::object(), "s3", "t6", "k6"};
    late.answer = Json{{"color", "red"}};
    Result<Json> refused = co_await backends.at(kAsk)->Invoke(late);
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);

    // The person said something else instead (or "stop"): the question is withdrawn.
    ToolRequest ask5{"ask", Json::object(), "s5", "t8", "k8"};
    ask5.may_ask = true;
    Result<Json> parked5 = co_await backends.at(kAsk)->Invoke(ask5);
    EXPECT_TRUE(parked5.ok());
    backends.at(kAsk)->Withdraw("s5");
    ToolRequest too_late{"ask", Json::object(), "s5", "t9", "k9"};
    too_late.answer = Json{{"color", "red"}};
    Result<Json> withdrawn = co_await backends.at(kAsk)->Invoke(too_late);
    EXPECT_EQ(withdrawn.status().code(), StatusCode::kFailedPrecondition);

    ToolRequest left_open{"ask", Json::object(), "s4", "t7", "k7"};
    left_open.may_ask = true;
    Result<Json> open = co_await backends.at(kAsk)->Invoke(left_open);
    EXPECT_TRUE(open.ok());
  });
  hub.Stop();  // answers the question left open with cancel instead of waiting it out
}

TEST(ElicitationTest, OnlyASingleChoiceBecomesAClarification) {
  Json enum_field = Json::parse(R"({"message":"Which color?","requestedSchema":{"type":"object",
    "properties":{"color":{"type":"string","enum":["r","b"],"enumNames":["Red","Blue"]}},"required":["color"]}})");
  std::optional<ElicitationQuestion> q = QuestionFromElicitation(enum_field);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->field, "color");
  ASSERT_EQ(q->choices.size(), 2u);
  EXPECT_EQ(q->choices[1].title, "Blue");
  Json envelope = ClarificationEnvelope(*q, Json{{"x", 1}});
  EXPECT_EQ(NormaliseToolResult(envelope).next_action, NextAction::kClarificationNeeded);
  EXPECT_EQ(envelope["clarification"]["options"][0]["metadata"]["resume_args"]["x"], 1);

  Json one_of = Json::parse(R"({"message":"Plan?","requestedSchema":{"type":"object","properties":{
    "plan":{"oneOf":[{"const":"p1","title":"Basic"},{"const":"p2","title":"Pro"}]}}}})");
  ASSERT_TRUE(QuestionFromElicitation(one_of).has_value());
  Json boolean = Json::parse(R"({"message":"Proceed?","requestedSchema":{"type":"object","properties":{
    "ok":{"type":"boolean"}},"required":["ok"]}})");
  ASSERT_TRUE(QuestionFromElicitation(boolean).has_value());
  EXPECT_EQ(QuestionFromElicitation(boolean)->choices[0].value, true);

  Json free_text = Json::parse(R"({"message":"Your name?","requestedSchema":{"type":"object","properties":{
    "name":{"type":"string"}},"required":["name"]}})");
  EXPECT_FALSE(QuestionFromElicitation(free_text).has_value());
  Json two_required = Json::parse(R"({"message":"Details","requestedSchema":{"type":"object","properties":{
    "color":{"type":"string","enum":["r"]},"name":{"type":"string"}},"required":["color","name"]}})");
  EXPECT_FALSE(QuestionFromElicitation(two_required).has_value());
  Json wrong_types = Json::parse(R"({"message":"x","requestedSchema":{"type":"object","properties":{
    "a":{"type":["string"],"enum":"not a list"}},"required":"a"}})");
  EXPECT_FALSE(QuestionFromElicitation(wrong_types).has_value());  // declined, not thrown
}

}  // namespace
}  // namespace reins

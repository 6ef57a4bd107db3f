// Floor leases through the runtime: the gate under concurrent submissions, stale
// queued turns, independent sessions, and failed results marked as errors.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include "support/runtime_harness.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: music
model: { provider: scripted }
floor: { enabled: true, default_ttl_s: 30, cancel_patterns: ['(?i)^stop'], max_queue_age_ms: 15000 }
tools:
  - name: play
    may_clarify: true
    lease: { domain: music, ttl_s: 60 }
    entities: { produces: { track: "$.data.ids[*]" } }
    timeout_ms: 30000  # the "slow" fixture takes 20 s
    input_schema: { type: object, properties: { title: { type: string }, track: { type: string } } }
  - name: volume
    input_schema: { type: object }
)";

constexpr const char* kPlay = R"([
  {"when": {"args": {"title": "Hallelujah"}}, "result": {"next_action": "clarification_needed",
    "data": {"ids": ["t1", "t2"]},
    "clarification": {"question": "Which one?", "options": [{"id": "t1"}, {"id": "t2"}]}}},
  {"when": {"args": {"title": "slow"}}, "result": {"success": true}, "latency_ms": 20000},
  {"result": {"success": true, "next_action": "complete"}}])";

constexpr const char* kReplies = R"([
  {"when": {"user_matches": "Hallelujah"}, "tool_calls": [{"name": "play", "args": {"title": "Hallelujah"}}]},
  {"when": {"user_matches": "slow"}, "tool_calls": [{"name": "play", "args": {"title": "slow"}}]},
  {"when": {"last": "user"}, "repeat": true, "tool_calls": [{"name": "play", "args": {"track": "t1"}}]},
  {"when": {"last": "tool"}, "repeat": true, "text": "Playing."}])";

class FloorTest : public testing::RuntimeHarness {
 protected:
  // Submits all inputs at the same virtual instant, each as its own coroutine, and
  // returns their results in submission order.
  std::vector<Result<TurnResult>> SubmitTogether(const std::vector<TurnInput>& inputs) {
    boost::asio::io_context io;
    std::vector<std::optional<Result<TurnResult>>> results(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      boost::asio::co_spawn(io, [&, i]() -> Task<void> {
        results[i] = co_await runtime_->RunTurn(session_, inputs[i]);
      }, boost::asio::detached);
    }
    clock_->RunVirtual(io);
    std::vector<Result<TurnResult>> out;
    for (auto& r : results) out.push_back(std::move(*r));
    return out;
  }
  static TurnInput Said(const std::string& speaker, const std::string& text) {
    TurnInput in;
    in.speaker = speaker;
    in.say = text;
    return in;
  }
};

TEST_F(FloorTest, ConcurrentTurnsNeverLetANonOwnerThroughAndAreAllRecorded) {
  Build(kAgent, kReplies, {{"play", kPlay}});
  ASSERT_EQ(Run(Said("alice", "Play Hallelujah"))->status, TurnStatus::kAwaitingClarification);
  std::vector<TurnInput> burst;
  for (int i = 0; i < 20; ++i) burst.push_back(Said(i % 2 ? "bob" : "carol", "play something else " + std::to_string(i)));
  TurnInput answer;
  answer.speaker = "alice";
  answer.select = "t1";
  burst.push_back(answer);
  for (int i = 0; i < 5; ++i) burst.push_back(Said("dave", "volume up"));

  std::vector<Result<TurnResult>> results = SubmitTogether(burst);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(results[i].ok());
    EXPECT_EQ(results[i]->status, TurnStatus::kBlocked) << "turn " << i << " got through during alice's lease";
    EXPECT_EQ(results[i]->model_calls, 0);
  }
  ASSERT_TRUE(results[20].ok());
  EXPECT_EQ(results[20]->status, TurnStatus::kCompleted);  // the owner's answer
  EXPECT_FALSE(results[20]->lease.has_value());            // ...resolves the follow-up
  for (int i = 21; i < 26; ++i) EXPECT_EQ(results[i]->status, TurnStatus::kCompleted);  // after the lease
  auto turns = runtime_->store().LoadTurns(session_);
  ASSERT_TRUE(turns.ok());
  EXPECT_EQ(turns->size(), 27u);  // nothing lost: every turn has a recorded status
  for (size_t i = 1; i < turns->size(); ++i) EXPECT_EQ((*turns)[i].turn_number, static_cast<int>(i) + 1);
}

TEST_F(FloorTest, ATurnThatWaitedTooLongInTheQueueIsDroppedAsStale) {
  Build(kAgent, kReplies, {{"play", kPlay}});
  std::vector<Result<TurnResult>> results =
      SubmitTogether({Said("alice", "play slow"), Said("bob", "volume up"), Said("carol", "volume down")});
  EXPECT_EQ(results[0]->status, TurnStatus::kCompleted);
  for (int i : {1, 2}) {
    EXPECT_EQ(results[i]->status, TurnStatus::kBlocked);
    EXPECT_EQ(results[i]->blocked_reason.rfind("stale: waited 20000 ms", 0), 0u) << results[i]->blocked_reason;
    EXPECT_EQ(results[i]->model_calls, 0);
  }
}

TEST_F(FloorTest, TwoSessionsDoNotShareAFloor) {
  Build(kAgent, kReplies, {{"play", kPlay}});
  ASSERT_EQ(Run(Said("alice", "Play Hallelujah"))->status, TurnStatus::kAwaitingClarification);
  std::string first = session_;
  session_ = runtime_->CreateSession().value();
  auto other = Run(Said("bob", "play something"));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, TurnStatus::kCompleted);
  session_ = first;
  EXPECT_EQ(Run(Said("bob", "play something"))->status, TurnStatus::kBlocked);
}

TEST_F(FloorTest, TheLeaseIsStoredWithCompareAndSet) {
  Build(kAgent, kReplies, {{"play", kPlay}});
  ASSERT_TRUE(Run(Said("alice", "Play Hallelujah")).ok());
  Result<Lease> lease = runtime_->store().LoadLease(session_);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->owner, "alice");
  EXPECT_EQ(lease->domain, "music");
  EXPECT_EQ(lease->expires_at_ms, 60'000);
  // A writer holding a stale version cannot move the floor.
  Result<int64_t> stale = runtime_->store().SetLease(session_, Lease{"bob", "music", 99'000, 0}, lease->version - 1);
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  Result<int64_t> fresh = runtime_->store().SetLease(session_, Lease{}, lease->version);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(*fresh, lease->version + 1);
  EXPECT_TRUE(runtime_->store().LoadLease(session_)->owner.empty());
}

TEST_F(FloorTest, OwnerNoteNamesTheOwnerInTheModelsContext) {
  Build(kAgent, kReplies, {{"play", kPlay}});
  ASSERT_TRUE(Run(Said("alice", "Play Hallelujah")).ok());
  ASSERT_TRUE(Run(Said("alice", "the first one")).ok());
  const std::string& system = recorder_->requests.back().messages.front().text;
  EXPECT_NE(system.find("Floor: alice holds the floor for music"), std::string::npos) << system;
}

TEST_F(FloorTest, FailedResultsReachTheModelMarkedAsErrors) {
  Build(kAgent, R"([{"when": {"last": "user"}, "tool_calls": [{"name": "volume", "args": {}}]},
                    {"when": {"last": "tool"}, "text": "The speaker is offline."}])",
        {{"volume", R"([{"error": "speaker offline"}])"}});
  ASSERT_TRUE(Run(Said("alice", "volume up")).ok());
  const Message& result = recorder_->requests.back().messages.back();
  EXPECT_EQ(result.role, Role::kTool);
  EXPECT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("speaker offline"), std::string::npos);
}

}  // namespace
}  // namespace reins

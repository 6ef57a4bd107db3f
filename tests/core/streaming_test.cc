// Governed streaming (docs/streaming.md): a streamed reply goes out sentence by
// sentence once the rails have judged each one; a claim waits for its response's calls
// and an unbacked one is never sent; what was sent is never taken back (a correction is
// appended); the writes the turn queued are in the store before the first
// delta (I12); the audit holds the reply until it is whole; a cut-off response never
// sends its unfinished sentence; the deltas add up to the stored reply.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "domain/text.h"
#include "support/runtime_harness.h"
#include "support/test_postgres.h"
#include "turn/reply_stream.h"

namespace reins {
namespace {

// --- ReplyStream on its own --------------------------------------------------------

struct Collected {
  std::vector<std::string> sent;
  std::vector<std::string> judged;
  std::string waits_for;  // a sentence containing this waits for its response's calls
  std::string drops;      // the judge drops a sentence containing this
  ReplyStream Stream(std::string held_by = "") {
    return ReplyStream([this](std::string_view t) { sent.emplace_back(t); },
                       [this](const std::string&, std::string s) {
                         judged.push_back(s);
                         return !drops.empty() && s.find(drops) != std::string::npos ? "" : s;
                       },
                       [this](const std::string& s) { return !waits_for.empty() && s.find(waits_for) != std::string::npos; },
                       std::move(held_by));
  }
};

TEST(CompleteSentencesEnd, WaitsForWhatFollowsAStop) {
  EXPECT_EQ(CompleteSentencesEnd("Hello there"), 0u);
  EXPECT_EQ(CompleteSentencesEnd("Hello there."), 0u);  // "there.5"? not known yet
  EXPECT_EQ(CompleteSentencesEnd("Hello there. H"), 12u);
  EXPECT_EQ(CompleteSentencesEnd("It costs 3.50 now. Ok"), 18u);
  EXPECT_EQ(CompleteSentencesEnd("A list:\n- one"), 8u);
}

TEST(ReplyStream, SendsEachSentenceOnceItIsWhole) {
  Collected c;
  ReplyStream stream = c.Stream();
  stream.BeginResponse(false);
  for (std::string_view piece : {"I'm so", " sorry. Your req", "uest is", " saved.", " Take care"}) stream.Feed(piece);
  EXPECT_EQ(c.sent, (std::vector<std::string>{"I'm so sorry.", " Your request is saved."}));
  stream.EndResponse("I'm so sorry. Your request is saved. Take care", false);
  EXPECT_EQ(c.sent.back(), " Take care");
  EXPECT_EQ(stream.sent(), "I'm so sorry. Your request is saved. Take care");
}

TEST(ReplyStream, ACutOffSentenceIsNeverSentAndTheRepeatContinuesAfterTheLastWholeOne) {
  Collected c;
  ReplyStream stream = c.Stream();
  stream.BeginResponse(false);
  stream.Feed("First part. Second pa");
  stream.EndResponse("First part. Second pa", true);
  EXPECT_EQ(stream.sent(), "First part.");
  EXPECT_EQ(stream.said(), "First part.");
  stream.BeginResponse(true);
  stream.Feed(" Second part, whole. Done.");
  stream.EndResponse("First part. Second part, whole. Done.", false);
  EXPECT_EQ(stream.sent(), "First part. Second part, whole. Done.");
  EXPECT_EQ(stream.response_start(), 0u);
}

TEST(ReplyStream, AProviderThatDidNotStreamGivesItsTextAtTheEnd) {
  Collected c;
  ReplyStream stream = c.Stream();
  stream.BeginResponse(false);
  stream.EndResponse("One. Two.", false);
  EXPECT_EQ(c.sent, (std::vector<std::string>{"One.", " Two."}));
}

TEST(ReplyStream, AClaimWaitsWithWhatFollowsItUntilTheNextResponseBegins) {
  Collected c;
  c.waits_for = "saved";
  ReplyStream stream = c.Stream();
  stream.BeginResponse(false);
  stream.EndResponse("One moment. I've saved it. Anything else?", false);
  EXPECT_EQ(c.sent, (std::vector<std::string>{"One moment."}));
  EXPECT_EQ(c.judged.size(), 1u);  // the waiting ones are judged once, when they go
  stream.BeginResponse(false);     // the response's calls ran
  EXPECT_EQ(c.sent, (std::vector<std::string>{"One moment.", " I've saved it.", " Anything else?"}));
  EXPECT_EQ(stream.response_start(), stream.sent().size());
}

TEST(ReplyStream, AWaitingClaimTheJudgeDropsIsNeverSent) {
  Collected c;
  c.waits_for = c.drops = "saved";
  ReplyStream stream = c.Stream();
  stream.BeginResponse(false);
  stream.EndResponse("I've saved it. Take care.", false);
  EXPECT_TRUE(c.sent.empty());
  stream.Release();  // the reply closes (the pipeline's judge trims a first sentence; this one does not)
  EXPECT_EQ(stream.sent(), " Take care.");
  stream.Release();  // nothing waits any more
  EXPECT_EQ(stream.sent(), " Take care.");
}

// --- Through the runtime: the care agent's rails on a streamed reply -------------------

constexpr const char* kAgent = R"(name: care
model: { provider: scripted }
deferred: { mode: await, timeout_ms: 1000 }
tools:
  - name: submit_prayer_request
    title: prayer request
    timing: deferred
    deferred_instruction: QUEUED - lead with empathy.
    input_schema: { type: object, properties: { request: { type: string } }, required: [request] }
  - name: schedule_callback
    title: callback
    input_schema: { type: object }
rails:
  empathy_first:
    openers: ["I'm so sorry you're going through this."]
  no_internal_names: {}
  honest_claims: {}
)";

constexpr const char* kSaved = R"([{"result": {"success": true, "data": {"id": "pr_1"}}}])";

// The prayer request is queued; the reply opens with a result, names the tool, and
// claims a callback that never ran.
constexpr const char* kReplies = R"([
  {"when": {"last": "user"}, "tool_calls": [{"name": "submit_prayer_request", "args": {"request": "for my mother"}}]},
  {"when": {"last": "tool"}, "text": "I've submitted your prayer request. I used submit_prayer_request for it. I also scheduled a callback for you."}])";

class StreamingTest : public testing::RuntimeHarness {
 protected:
  // Runs one streamed turn, keeping every event the caller saw and, at the first delta,
  // the outbox as stored.
  Result<TurnResult> Stream(const std::string& say) {
    TurnInput in;
    in.say = say;
    in.on_event = [this](const TraceEvent& e) {
      seen.push_back(e);
      if (e.type == EventType::kReplyDelta && deltas.empty()) {
        auto outbox = runtime_->store().LoadOutbox(session_);
        if (outbox.ok()) outbox_at_first_delta = *outbox;
      }
      if (e.type == EventType::kReplyDelta) deltas.push_back(e.data.value("text", ""));
      if (e.type == EventType::kReplyFinal) final_data = e.data.json();
    };
    return Run(std::move(in));
  }
  std::string Deltas() const {
    std::string all;
    for (const std::string& d : deltas) all += d;
    return all;
  }
  std::vector<TraceEvent> seen;
  std::vector<std::string> deltas;
  std::vector<OutboxEntry> outbox_at_first_delta;
  Json final_data;
};

TEST_F(StreamingTest, RailsJudgeEachSentenceBeforeItIsSent) {
  Build(kAgent, kReplies, {{"submit_prayer_request", kSaved}});
  auto r = Stream("Please pray for my mother, she is in the hospital.");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->status, TurnStatus::kCompleted);
  ASSERT_EQ(deltas.size(), 2u);
  // The result-first opener got its acknowledgement before it was sent.
  EXPECT_EQ(deltas[0], "I'm so sorry you're going through this. I've submitted your prayer request.");
  // The tool's internal name was replaced mid-stream.
  EXPECT_EQ(deltas[1], " I used prayer request for it.");
  // The claim of a callback that never ran waited for the response's calls, was never
  // sent, and the close says what was not done.
  ASSERT_TRUE(final_data.is_object());
  EXPECT_EQ(final_data.value("streamed", size_t{0}), Deltas().size());
  const std::string& reply = r->reply;
  ASSERT_EQ(reply.compare(0, Deltas().size(), Deltas()), 0) << reply;
  EXPECT_EQ(reply.find("scheduled a callback"), std::string::npos) << reply;
  EXPECT_NE(reply.find("I used prayer request for it. I was not able to complete the callback"), std::string::npos)
      << reply;
  // Stored: exactly what the person received.
  auto stored = runtime_->store().LoadTurns(session_);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->back().reply, reply);
  // The first event said the reply streams.
  EXPECT_EQ(seen.front().data.json()["reply"]["stream"], "sentences");
}

TEST_F(StreamingTest, AClaimWrittenBeforeItsCallGoesOutOnceTheCallRan) {
  // The model says it scheduled the callback, then makes the call, in one response.
  constexpr const char* kClaimFirst = R"([
    {"when": {"last": "user"}, "text": "I've scheduled a callback for you.", "tool_calls": [{"name": "schedule_callback", "args": {}}]},
    {"when": {"last": "tool"}, "text": "Talk soon."}])";
  Build(kAgent, kClaimFirst, {{"schedule_callback", R"([{"result": {"ok": true}}])"}});
  auto r = Stream("Can someone call me back?");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("schedule_callback"), 1);
  // The claim went out after the call ran, and no correction follows it.
  size_t executed = seen.size(), claim = seen.size();
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i].type == EventType::kToolExecuted && executed == seen.size()) executed = i;
    if (seen[i].type == EventType::kReplyDelta && seen[i].data.value("text", "").find("scheduled a callback") != std::string::npos) {
      claim = i;
    }
  }
  ASSERT_LT(claim, seen.size()) << r->reply;
  EXPECT_LT(executed, claim);
  EXPECT_EQ(r->reply.find("not able"), std::string::npos) << r->reply;
  EXPECT_EQ(r->reply, Deltas());
}

TEST_F(StreamingTest, TheQueuedWriteIsInTheStoreBeforeTheFirstDelta) {
  Build(kAgent, kReplies, {{"submit_prayer_request", kSaved}});
  auto r = Stream("Please pray for my mother, she is in the hospital.");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(outbox_at_first_delta.size(), 1u);
  EXPECT_EQ(outbox_at_first_delta[0].tool, "submit_prayer_request");
  EXPECT_EQ(outbox_at_first_delta[0].status, "staged");
  // The commit made it pending, and it ran once after the reply.
  EXPECT_EQ(Calls("submit_prayer_request"), 1);
  auto outbox = runtime_->store().LoadOutbox(session_);
  ASSERT_TRUE(outbox.ok());
  ASSERT_EQ(outbox->size(), 1u);
  EXPECT_EQ((*outbox)[0].status, "done");
}

TEST_F(StreamingTest, AFailedTurnWithdrawsTheWritesItStaged) {
  // The model queues the write, says a sentence, then its next call fails (nothing is
  // scripted for it): the staged write must not run behind "could not complete".
  constexpr const char* kFailing = R"([
    {"when": {"last": "user"}, "tool_calls": [{"name": "submit_prayer_request", "args": {"request": "x"}}]},
    {"when": {"last": "tool"}, "text": "One moment.", "tool_calls": [{"name": "schedule_callback", "args": {}}]}])";
  Build(kAgent, kFailing, {{"submit_prayer_request", kSaved}, {"schedule_callback", R"([{"result": {"ok": true}}])"}});
  auto r = Stream("Please pray for my mother.");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kFailed);
  ASSERT_FALSE(deltas.empty());
  EXPECT_EQ(deltas[0].rfind("One moment.", std::string::npos), deltas[0].size() - std::string("One moment.").size());
  EXPECT_EQ(r->reply.compare(0, Deltas().size(), Deltas()), 0);
  EXPECT_NE(r->reply.find("could not complete"), std::string::npos);
  EXPECT_EQ(Calls("submit_prayer_request"), 0);
  auto outbox = runtime_->store().LoadOutbox(session_);
  ASSERT_TRUE(outbox.ok());
  EXPECT_TRUE(outbox->empty());
}

TEST_F(StreamingTest, AStagedWriteWhoseTurnNeverCommittedRunsOnceOnRecovery) {
  Build(kAgent, kReplies, {{"submit_prayer_request", kSaved}});
  // What a crash mid-stream leaves: a staged row, no turn.
  OutboxEntry e{"k_crash", session_, "t_never_committed", "submit_prayer_request", Json{{"request", "x"}},
                DeferredMode::kAwait, "staged", 0, nullptr, "", 0};
  ASSERT_TRUE(runtime_->store().StageOutbox({e}).ok());
  auto ran = testing::RunSync(runtime_->ResumeOutbox(), clock_.get());
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  EXPECT_EQ(*ran, 1);
  EXPECT_EQ(Calls("submit_prayer_request"), 1);
  auto again = testing::RunSync(runtime_->ResumeOutbox(), clock_.get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
  EXPECT_EQ(Calls("submit_prayer_request"), 1);
}

TEST_F(StreamingTest, ACutOffAnswerNeverSendsItsUnfinishedSentenceAndItsRepeatGoesOnFromTheLastWholeOne) {
  constexpr const char* kCutOff = R"([
    {"when": {"last": "user"}, "text": "Services are at 9. The second one is at 1", "finish": "length"},
    {"text": " The second one is at 11."}])";
  Build(kAgent, kCutOff, {});
  auto r = Stream("When is service?");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(deltas, (std::vector<std::string>{"Services are at 9.", " The second one is at 11."}));
  EXPECT_EQ(r->reply, "Services are at 9. The second one is at 11.");
  // The repeat carried what was already said, so the model goes on from there.
  ASSERT_EQ(recorder_->requests.size(), 2u);
  EXPECT_EQ(recorder_->requests[1].messages.back().role, Role::kAssistant);
  EXPECT_EQ(recorder_->requests[1].messages.back().text, "Services are at 9.");
}

// On a shared store another replica may be streaming that very turn: its staged write
// is left alone until the turn is surely gone (older than any claim on the session).
TEST_F(StreamingTest, OnASharedStoreAStagedWriteWaitsUntilItsTurnIsSurelyGone) {
  const std::string url = testing::TestPostgres::Shared().Url(testing::TestPostgres::Shared().NewDatabase());
  Build(kAgent, kReplies, {{"submit_prayer_request", kSaved}}, url);
  OutboxEntry e{"k_peer", session_, "t_on_another_replica", "submit_prayer_request", Json{{"request", "x"}},
                DeferredMode::kAwait, "staged", 0, nullptr, "", clock_->NowMs()};
  ASSERT_TRUE(runtime_->store().StageOutbox({e}).ok());
  auto early = testing::RunSync(runtime_->ResumeOutbox(), clock_.get());
  ASSERT_TRUE(early.ok()) << early.status().message();
  EXPECT_EQ(*early, 0);
  EXPECT_EQ(Calls("submit_prayer_request"), 0);
  // limits.turn_timeout_ms (the default) + deferred.timeout_ms (1 s) + 30 s later.
  clock_->Advance(runtime_->config()->turn_timeout_ms + 1000 + 30000);
  auto late = testing::RunSync(runtime_->ResumeOutbox(), clock_.get());
  ASSERT_TRUE(late.ok()) << late.status().message();
  // (Its count may say 0: with virtual time the wait for a store thread's answer gives
  // up at once and the outcome is recorded unattended. It ran, once, and is done.)
  EXPECT_EQ(Calls("submit_prayer_request"), 1);
  auto outbox = runtime_->store().LoadOutbox(session_);
  ASSERT_TRUE(outbox.ok());
  ASSERT_EQ(outbox->size(), 1u);
  EXPECT_EQ((*outbox)[0].status, "done");
}

TEST_F(StreamingTest, TheAuditHoldsTheReplyUntilItIsWhole) {
  std::string agent = kAgent;
  agent += "audit: { enabled: true }\n";
  constexpr const char* kAudited = R"([
    {"when": {"purpose": "chat"}, "text": "Hello. Here is your answer."},
    {"when": {"purpose": "audit"}, "json": {"answered_question": true, "grounded_in_evidence": true,
      "hallucinated_ui_or_actions": false, "tool_choice_ok": true, "missing_tool_opportunities": [],
      "contains_extraneous_content": false, "rewrite_needed": false, "repair_action": "none", "critique": ""}}])";
  Build(agent, kAudited, {});
  auto r = Stream("hi");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(deltas.empty());  // no delta before the commit: the stream was held
  EXPECT_EQ(seen.front().data.json()["reply"]["stream"], "whole");
  EXPECT_EQ(seen.front().data.json()["reply"]["held_by"], "audit.enabled");
  EXPECT_FALSE(final_data.contains("streamed"));
  EXPECT_EQ(final_data.value("text", ""), r->reply);
}

TEST_F(StreamingTest, ATurnNobodyStreamsIsReviewedWhole) {
  Build(kAgent, kReplies, {{"submit_prayer_request", kSaved}});
  auto r = Say("Please pray for my mother, she is in the hospital.");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->reply.rfind("I'm so sorry you're going through this.", 0), 0u);
  EXPECT_NE(r->reply.find("I used prayer request for it."), std::string::npos);
}

}  // namespace
}  // namespace reins

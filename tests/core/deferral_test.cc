// Deferred tools end to end: the model's context holds the synthetic instruction, never
// the real result (I4); writes run after the reply under their idempotency key and are
// stored first (I12); failures reach the person (I5); a crash between the reply and the
// write loses nothing and runs nothing twice.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/runtime_harness.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: care
model: { provider: scripted }
deferred: { mode: await, timeout_ms: 1000 }
tools:
  - name: save_prayer
    title: prayer request
    timing: deferred
    deferred_instruction: QUEUED - lead with empathy.
    failure_note: (Note - the prayer request was not saved.)
    input_schema: { type: object, properties: { request: { type: string } }, required: [request] }
  - name: service_times
    input_schema: { type: object }
)";

constexpr const char* kReplies = R"([
  {"when": {"last": "user"}, "repeat": true, "tool_calls": [
     {"name": "save_prayer", "args": {"request": "for my mother"}}, {"name": "service_times", "args": {}}]},
  {"when": {"last": "tool"}, "repeat": true, "text": "I'm so sorry. Services are at 9 and 11."}])";

constexpr const char* kSaved = R"([{"result": {"success": true, "data": {"id": "pr_secret_42"}}}])";
constexpr const char* kTimes = R"([{"result": {"times": ["9:00", "11:00"]}}])";

class DeferralTest : public testing::RuntimeHarness {};

// A streaming caller sees progress as it happens, the reply's sentences as they are
// written (its outbox rows already staged, I12: streaming_test), the whole reply only
// once the turn is durable, then the deferred call's outcome; a session listener sees
// the same durable events, not the deltas.
TEST_F(DeferralTest, StreamsProgressLiveAndTheReplyOnlyAfterTheCommit) {
  std::vector<std::string> seen;
  std::vector<std::string> session_events;
  Build(kAgent, kReplies, {{"save_prayer", kSaved}, {"service_times", kTimes}}, "sqlite::memory:",
        [&](RuntimeParts& parts) {
          parts.after_commit = [&](const std::string&) { seen.push_back("<commit>"); };
          parts.on_event = [&](const std::string&, const TraceEvent& e) { session_events.emplace_back(e.name()); };
        });
  TurnInput in;
  in.say = "Please pray for my mother. When is service?";
  in.on_event = [&](const TraceEvent& e) { seen.emplace_back(e.name()); };
  auto r = Run(std::move(in));
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto at = [&](const std::string& type) { return std::find(seen.begin(), seen.end(), type) - seen.begin(); };
  const auto commit = at("<commit>");
  ASSERT_LT(commit, static_cast<std::ptrdiff_t>(seen.size()));
  EXPECT_LT(at("turn.started"), commit);
  EXPECT_LT(at("tool.deferred"), commit);
  EXPECT_LT(at("tool.executed"), commit);
  EXPECT_LT(at("reply.delta"), commit);
  EXPECT_GT(at("reply.delta"), at("tool.deferred"));
  EXPECT_GT(at("reply.final"), commit);
  EXPECT_LT(at("reply.final"), static_cast<std::ptrdiff_t>(seen.size()));
  EXPECT_GT(at("deferred.executed"), at("reply.final"));
  EXPECT_EQ(std::count(seen.begin(), seen.end(), "turn.started"), 1);
  EXPECT_NE(std::find(session_events.begin(), session_events.end(), "deferred.executed"), session_events.end());
  const auto deltas = std::count(seen.begin(), seen.end(), "reply.delta");
  EXPECT_EQ(deltas, 2);  // "I'm so sorry." " Services are at 9 and 11."
  EXPECT_EQ(session_events.size() + 1 + deltas, seen.size());  // everything, minus the commit marker and the deltas
}

TEST_F(DeferralTest, ModelSeesTheInstructionNeverTheRealResult) {
  Build(kAgent, kReplies, {{"save_prayer", kSaved}, {"service_times", kTimes}});
  auto r = Say("Please pray for my mother. When is service?");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  ASSERT_EQ(recorder_->requests.size(), 2u);
  const std::vector<Message>& context = recorder_->requests[1].messages;
  bool saw_instruction = false;
  for (const Message& m : context) {
    EXPECT_EQ(m.text.find("pr_secret_42"), std::string::npos) << "the real result leaked into the model's context";
    if (m.role == Role::kTool && m.tool_name == "save_prayer") saw_instruction = m.text == "QUEUED - lead with empathy.";
  }
  EXPECT_TRUE(saw_instruction);
  EXPECT_EQ(Calls("save_prayer"), 1);  // ran after the reply
  EXPECT_EQ(Calls("service_times"), 1);
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[0].status, ToolOutcome::Status::kDeferred);
  ASSERT_TRUE(r->tools[0].result.has_value());
  EXPECT_TRUE(r->tools[0].result->success);
  // The deferred run is recorded after the final reply, and the outbox row is done.
  size_t final_at = 0, ran_at = 0;
  for (size_t i = 0; i < r->events.size(); ++i) {
    if (r->events[i].type == "reply.final") final_at = i;
    if (r->events[i].type == "deferred.executed") ran_at = i;
  }
  EXPECT_GT(ran_at, final_at);
  auto outbox = runtime_->store().LoadOutbox(session_);
  ASSERT_TRUE(outbox.ok());
  ASSERT_EQ(outbox->size(), 1u);
  EXPECT_EQ((*outbox)[0].status, "done");
  EXPECT_EQ((*outbox)[0].attempts, 1);
  EXPECT_EQ((*outbox)[0].key, r->tools[0].idempotency_key);
}

TEST_F(DeferralTest, AFailedWriteAppendsItsNoteOnce) {
  Build(kAgent, kReplies, {{"save_prayer", R"([{"error": "db down"}])"}, {"service_times", kTimes}});
  auto r = Say("Please pray for my mother. When is service?");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reply, "I'm so sorry. Services are at 9 and 11.\n\n(Note - the prayer request was not saved.)");
  auto turns = runtime_->store().LoadTurns(session_);
  ASSERT_TRUE(turns.ok());
  EXPECT_EQ((*turns)[0].reply, r->reply);  // the stored reply is the honest one too
  auto calls = runtime_->store().LoadInvocations(session_);
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ((*calls)[0].success, false);
  EXPECT_TRUE((*calls)[0].deferred);
  // The model's history says what the person was told: the next call sees the note,
  // in memory and as stored.
  auto stored = runtime_->store().LoadMessages(session_);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->back().text, r->reply);
  ASSERT_TRUE(Say("Thank you").ok());
  const std::vector<Message>& next = recorder_->requests[2].messages;
  bool seen = std::any_of(next.begin(), next.end(), [](const Message& m) {
    return m.role == Role::kAssistant && m.text.find("(Note - the prayer request was not saved.)") != std::string::npos;
  });
  EXPECT_TRUE(seen);
}

// A reply that says the write was done, and then it failed (await mode): the claim goes,
// the note says what was not done, once (I5).
TEST_F(DeferralTest, AFailedWritesNoteTakesThePlaceOfTheClaimOfIt) {
  constexpr const char* kClaiming = R"([
    {"when": {"last": "user"}, "repeat": true, "tool_calls": [{"name": "save_prayer", "args": {"request": "for my mother"}}]},
    {"when": {"last": "tool"}, "repeat": true, "text": "I'm so sorry. I've saved your prayer request for the team."}])";
  Build(kAgent, kClaiming, {{"save_prayer", R"([{"error": "db down"}])"}});
  auto r = Say("Please pray for my mother.");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reply, "I'm so sorry.\n\n(Note - the prayer request was not saved.)");
  auto turns = runtime_->store().LoadTurns(session_);
  ASSERT_TRUE(turns.ok());
  EXPECT_EQ((*turns)[0].reply, r->reply);
}

TEST_F(DeferralTest, TheBackendGetsTheIdempotencyKey) {
  std::string seen_key;
  struct KeyBackend final : public ToolBackend {
    explicit KeyBackend(std::string* k) : key(k) {}
    Task<Result<Json>> Invoke(const ToolRequest& request) override {
      *key = request.idempotency_key;
      co_return Json::object();
    }
    std::string* key;
  };
  Build(kAgent, kReplies, {{"service_times", kTimes}}, "sqlite::memory:",
        [&](RuntimeParts& parts) { parts.tool_backends["save_prayer"] = std::make_shared<KeyBackend>(&seen_key); });
  auto r = Say("Please pray for my mother.");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(seen_key, r->tools[0].idempotency_key);
  EXPECT_EQ(seen_key, r->turn_id + ":1:0");
}

// The W3C trace context reaches a backend that reads it, in the immediate call and in the
// deferred write alike; one that says it forwards none gets none (it is not derived).
TEST_F(DeferralTest, ABackendGetsItsCallsTraceparentUnlessItForwardsNone) {
  struct Seen final : public ToolBackend {
    Seen(std::string* t, bool forwards) : traceparent(t), forwards(forwards) {}
    Task<Result<Json>> Invoke(const ToolRequest& request) override {
      *traceparent = request.traceparent;
      co_return Json::object();
    }
    bool ForwardsTraceContext() const override { return forwards; }
    std::string* traceparent;
    bool forwards;
  };
  for (bool forwards : {true, false}) {
    std::string deferred = "unset", immediate = "unset";
    Build(kAgent, kReplies, {}, "sqlite::memory:", [&](RuntimeParts& parts) {
      parts.tool_backends["save_prayer"] = std::make_shared<Seen>(&deferred, forwards);
      parts.tool_backends["service_times"] = std::make_shared<Seen>(&immediate, forwards);
    });
    ASSERT_TRUE(Say("Please pray for my mother.").ok());
    if (!forwards) {
      EXPECT_EQ(deferred, "");
      EXPECT_EQ(immediate, "");
      continue;
    }
    // 00-<trace id>-<span id>-<flags>: one trace, a span of its own for each call.
    ASSERT_EQ(deferred.size(), 55u) << deferred;
    ASSERT_EQ(immediate.size(), 55u) << immediate;
    EXPECT_EQ(deferred.substr(0, 36), immediate.substr(0, 36));
    EXPECT_NE(deferred.substr(36, 16), immediate.substr(36, 16));
  }
}

// A backend that appends each key it runs to a file: what a crashed process did
// survives it, so "exactly once" can be counted across processes.
class JournalBackend final : public ToolBackend {
 public:
  explicit JournalBackend(std::string path) : path_(std::move(path)) {}
  Task<Result<Json>> Invoke(const ToolRequest& request) override {
    std::ofstream(path_, std::ios::app) << request.idempotency_key << "\n";
    co_return Json{{"success", true}};
  }

 private:
  std::string path_;
};

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(DeferralTest, KillMinusNineBetweenReplyAndWriteRunsTheWriteOnceAfterRestart) {
  std::string db = ::testing::TempDir() + "deferral_crash_test.db";
  std::string journal = ::testing::TempDir() + "deferral_crash_test.journal";
  for (const std::string& f : {db, db + "-wal", db + "-shm", journal}) std::remove(f.c_str());

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child runs one turn and is killed the moment the turn and its outbox rows are
    // committed, before any deferred call could run.
    Build(kAgent, kReplies, {{"service_times", kTimes}}, "sqlite:" + db, [&](RuntimeParts& parts) {
      parts.tool_backends["save_prayer"] = std::make_shared<JournalBackend>(journal);
      parts.after_commit = [](const std::string&) { raise(SIGKILL); };
    });
    (void)Say("Please pray for my mother.");
    _exit(3);  // not reached: SIGKILL above
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child was not killed where planned";
  EXPECT_TRUE(Lines(journal).empty()) << "the write ran before the crash";

  // Restart on the same database: the unfinished entry runs exactly once.
  Build(kAgent, kReplies, {{"service_times", kTimes}}, "sqlite:" + db, [&](RuntimeParts& parts) {
    parts.tool_backends["save_prayer"] = std::make_shared<JournalBackend>(journal);
  });
  Result<int> resumed = testing::RunSync(runtime_->ResumeOutbox(), clock_.get());
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(*resumed, 1);
  Result<int> again = testing::RunSync(runtime_->ResumeOutbox(), clock_.get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);  // nothing left: a second restart runs nothing twice
  std::vector<std::string> ran = Lines(journal);
  ASSERT_EQ(ran.size(), 1u);
  auto unfinished = runtime_->store().UnfinishedOutbox();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_TRUE(unfinished->empty());
  for (const std::string& f : {db, db + "-wal", db + "-shm", journal}) std::remove(f.c_str());
}

}  // namespace
}  // namespace reins

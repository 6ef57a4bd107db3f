// untrusted_data through the runtime and its stores: what an untrusted tool returned in
// one turn is outside data in a later one after the process restarts on the same SQLite
// file, and on another replica of the same PostgreSQL database.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "config/agent_config_loader.h"
#include "model/scripted_model.h"
#include "reins/runtime.h"
#include "support/run_sync.h"
#include "support/test_postgres.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: bank
model: { provider: scripted }
untrusted_data: {}
tools:
  - name: read_file
    title: file reader
    description: Reads a file from the user's documents.
    annotations: { readOnlyHint: true }
    trust: untrusted
    input_schema: { type: object, properties: { path: { type: string } }, required: [path] }
  - name: send_money
    title: money transfer
    description: Sends money to a recipient.
    timing: immediate
    input_schema:
      type: object
      properties: { recipient: { type: string }, amount: { type: number } }
      required: [recipient, amount]
)";

constexpr const char* kFile = R"([{"result": {"data": {"content": "Please pay 98.70 to IBAN UK12345678901234567890."}}}])";
constexpr const char* kSent = R"([{"result": {"data": {"status": "sent"}}}])";

// Turn 1 reads the bill; turn 2 pays it to the IBAN the bill gave; after the person's
// answer, one more sentence.
constexpr const char* kReplies = R"([
  {"when": {"turn": 1, "last": "user"}, "tool_calls": [{"name": "read_file", "args": {"path": "bill.txt"}}]},
  {"when": {"turn": 1, "last": "tool"}, "text": "The bill asks for 98.70."},
  {"when": {"turn": 2, "last": "user"}, "tool_calls": [{"name": "send_money", "args": {"recipient": "UK12345678901234567890", "amount": 98.7}}]},
  {"when": {"last": "tool"}, "repeat": true, "text": "Done."}])";

std::unique_ptr<Runtime> Start(const std::string& store_url, std::shared_ptr<Clock> clock) {
  Diagnostics diag;
  AgentConfig config;
  EXPECT_TRUE(ParseAgentConfig(ParseYaml(kAgent, "agent.yaml", diag), "", ".", diag, &config)) << diag.Format();
  RuntimeParts parts;
  parts.model = std::make_shared<ScriptedModel>(Json::parse(kReplies));
  parts.clock = clock;
  auto store = OpenStore(store_url);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  parts.store = std::move(store).value();
  parts.tool_backends["read_file"] = std::make_shared<FixtureBackend>("read_file", Json::parse(kFile), *clock);
  parts.tool_backends["send_money"] = std::make_shared<FixtureBackend>("send_money", Json::parse(kSent), *clock);
  auto runtime = Runtime::Create(config, parts);
  EXPECT_TRUE(runtime.ok()) << runtime.status().ToString();
  return std::move(runtime).value();
}

TurnInput Said(const std::string& text) {
  TurnInput in;
  in.say = text;
  return in;
}

TurnInput Answered(bool approve) {
  TurnInput in;
  in.approve = approve;
  return in;
}

Result<TurnResult> RunOn(Runtime& runtime, const std::string& session, TurnInput in) {
  return testing::RunSync(runtime.RunTurn(session, std::move(in)));
}

// Turn 2 paused for the person, with where the recipient came from: the read in turn 1.
void ExpectPausedForTheBill(const Result<TurnResult>& paid) {
  ASSERT_TRUE(paid.ok()) << paid.status().ToString();
  EXPECT_EQ(paid->status, TurnStatus::kAwaitingApproval);
  ASSERT_TRUE(paid->approval);
  EXPECT_EQ(paid->approval->reason, ApprovalReason::kUntrustedData);
  ASSERT_TRUE(paid->approval->provenance.contains("recipient")) << paid->approval->provenance.dump();
  EXPECT_EQ(paid->approval->provenance["recipient"][0]["tool"], "read_file");
  EXPECT_EQ(paid->approval->provenance["recipient"][0]["turn"], 1);
  EXPECT_NE(paid->reply.find("(turn 1)"), std::string::npos) << paid->reply;
}

bool Sent(const TurnResult& r) {
  for (const ToolOutcome& t : r.tools) {
    if (t.name == "send_money" && t.status == ToolOutcome::Status::kExecuted) return true;
  }
  return false;
}

TEST(UntrustedRuntimeTest, OutsideDataReadBeforeARestartStillCountsAfterIt) {
  const std::string db = ::testing::TempDir() + "untrusted_restart_test.db";
  std::remove(db.c_str());
  auto clock = std::make_shared<SystemClock>();
  std::string session;
  {
    std::unique_ptr<Runtime> before = Start("sqlite:" + db, clock);
    session = before->CreateSession().value();
    Result<TurnResult> read = RunOn(*before, session, Said("What does bill.txt say?"));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->status, TurnStatus::kCompleted);
  }
  {
    std::unique_ptr<Runtime> after = Start("sqlite:" + db, clock);  // a fresh process: nothing cached
    ExpectPausedForTheBill(RunOn(*after, session, Said("Pay it.")));
  }
  std::unique_ptr<Runtime> again = Start("sqlite:" + db, clock);  // the pending approval was stored too
  Result<TurnResult> denied = RunOn(*again, session, Answered(false));
  ASSERT_TRUE(denied.ok()) << denied.status().ToString();
  EXPECT_EQ(denied->status, TurnStatus::kCompleted);
  EXPECT_FALSE(Sent(*denied));
}

TEST(UntrustedRuntimeTest, OutsideDataReadOnOneReplicaCountsOnAnother) {
  const std::string url = testing::TestPostgres::Shared().Url(testing::TestPostgres::Shared().NewDatabase());
  auto clock = std::make_shared<SystemClock>();
  std::unique_ptr<Runtime> a = Start(url, clock);
  std::unique_ptr<Runtime> b = Start(url, clock);
  const std::string session = a->CreateSession().value();
  ASSERT_TRUE(RunOn(*a, session, Said("What does bill.txt say?")).ok());
  ExpectPausedForTheBill(RunOn(*b, session, Said("Pay it.")));
  Result<TurnResult> approved = RunOn(*a, session, Answered(true));
  ASSERT_TRUE(approved.ok()) << approved.status().ToString();
  EXPECT_TRUE(Sent(*approved)) << "the approved call runs, on whichever replica the answer reaches";
}

}  // namespace
}  // namespace reins

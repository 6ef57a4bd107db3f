// The human in the loop over `reins serve`, end to end: the real binary on a free port,
// tests/server/approvals_agent.yaml (scripted model, fixture tools), real HTTP. An
// approval asked only when its condition holds, in the rule's words; answers with edits
// and messages; who may answer (403 not_an_approver, API keys with speakers and roles);
// a lapse across a restart; "always for this session" and its revocation.
#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

#include <unistd.h>

#include "reins/json.h"
#include "server/api_client.h"
#include "server/server_process.h"

namespace reins {
namespace {

using testing::AddKeyWithBinary;
using testing::Call;
using testing::Reply;
using testing::ServerProcess;

using Headers = std::vector<HttpHeaderField>;

std::string Turn(const std::string& speaker, Json fields) {
  fields["speaker"] = speaker;
  return fields.dump();
}
std::string Say(const std::string& speaker, const std::string& text) { return Turn(speaker, {{"say", text}}); }
std::string Approve(const std::string& speaker, Json answer) { return Turn(speaker, {{"approve", std::move(answer)}}); }

class ApprovalsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    server_.reset();
    for (const std::string& f : files_) std::remove(f.c_str());
  }
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--config", "tests/server/approvals_agent.yaml"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<ServerProcess>(args);
    ASSERT_GT(server_->port(), 0) << "the server did not start: " << server_->first_line() << server_->Log();
  }
  // A file that goes when the test ends.
  std::string TempFile(const std::string& name) {
    std::string path = "/tmp/reins-approvals-" + std::to_string(::getpid()) + "-" + name;
    std::remove(path.c_str());
    files_.push_back(path);
    return path;
  }
  std::string url(const std::string& path) const { return server_->base_url() + path; }
  std::string NewSession(Headers headers = {}) {
    Reply r = Call("POST", url("/v1/sessions"), "{}", std::move(headers));
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("session_id", "");
  }
  Reply Post(const std::string& session, const std::string& body, Headers headers = {}) {
    return Call("POST", url("/v1/sessions/" + session + "/turns"), body, std::move(headers));
  }
  // The events of every stored turn of a session, in order.
  std::vector<Json> Events(const std::string& session, const std::string& type, Headers headers = {}) {
    Reply trace = Call("GET", url("/v1/sessions/" + session + "/trace"), "", std::move(headers));
    EXPECT_EQ(trace.status, 200);
    std::vector<Json> out;
    for (const Json& turn : trace.body["turns"]) {
      for (const Json& e : turn["events"]) {
        if (e["type"] == type) out.push_back(e["data"]);
      }
    }
    return out;
  }

  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> files_;
};

TEST_F(ApprovalsTest, OnlyACallThatMeetsTheConditionAsksAndItAsksInTheRulesWords) {
  Start();
  std::string id = NewSession();
  Reply small = Post(id, Say("ana", "a small refill please"));
  ASSERT_EQ(small.status, 200) << small.body.dump();
  EXPECT_EQ(small.body["status"], "completed") << "30 units: the rule's condition (above 90) does not hold";
  EXPECT_EQ(small.body["tools"][0]["status"], "executed");

  Reply large = Post(id, Say("ana", "a refill please"));
  ASSERT_EQ(large.status, 200) << large.body.dump();
  EXPECT_EQ(large.body["status"], "awaiting_approval");
  const Json& approval = large.body["approval"];
  EXPECT_EQ(approval["reason"], "condition");
  EXPECT_EQ(approval["prompt"], "Refill metformin: 120 units?");
  EXPECT_EQ(approval["requested_by"], "ana");
  EXPECT_EQ(approval["allow_edit"], true);
  EXPECT_EQ(approval["tool"], "refill");
  Reply session = Call("GET", url("/v1/sessions/" + id));
  EXPECT_EQ(session.body["pending_approval"]["prompt"], "Refill metformin: 120 units?");
}

TEST_F(ApprovalsTest, AnEditedAnswerRunsTheEditedCallAfterEveryGuardAndRecordsBothVersions) {
  Start();
  std::string id = NewSession();
  ASSERT_EQ(Post(id, Say("ana", "a refill please")).body["status"], "awaiting_approval");
  // 400 units is past the schema's maximum: the edited call is checked again and refused.
  Reply too_many = Post(id, Approve("ana", {{"decision", true}, {"args", {{"quantity", 400}}}}));
  ASSERT_EQ(too_many.status, 200) << too_many.body.dump();
  ASSERT_EQ(too_many.body["tools"].size(), 1u) << too_many.body.dump();
  EXPECT_EQ(too_many.body["tools"][0]["status"], "rejected");
  EXPECT_EQ(too_many.body["tools"][0]["reason"], "schema");

  ASSERT_EQ(Post(id, Say("ana", "a refill please")).body["status"], "awaiting_approval");
  Reply fewer = Post(id, Approve("ana", {{"decision", true}, {"args", {{"quantity", 60}}}, {"message", "60 is enough"}}));
  ASSERT_EQ(fewer.status, 200) << fewer.body.dump();
  EXPECT_EQ(fewer.body["status"], "completed");
  ASSERT_EQ(fewer.body["tools"].size(), 1u);
  EXPECT_EQ(fewer.body["tools"][0]["status"], "executed");
  EXPECT_EQ(fewer.body["tools"][0]["args"], Json({{"drug", "metformin"}, {"quantity", 60}})) << "a shallow merge";

  std::vector<Json> granted = Events(id, "approval.granted");
  ASSERT_EQ(granted.size(), 2u);
  EXPECT_EQ(granted[1]["args"], Json({{"drug", "metformin"}, {"quantity", 120}})) << "what was asked";
  EXPECT_EQ(granted[1]["approved_args"], Json({{"drug", "metformin"}, {"quantity", 60}})) << "what was approved";
  EXPECT_EQ(granted[1]["message"], "60 is enough");
  EXPECT_EQ(granted[1]["by"], "ana");
}

TEST_F(ApprovalsTest, ADenialsMessageIsRecordedAndNothingRuns) {
  Start();
  std::string id = NewSession();
  ASSERT_EQ(Post(id, Say("ana", "a refill please")).body["status"], "awaiting_approval");
  Reply denied = Post(id, Approve("ana", {{"decision", false}, {"message", "I still have plenty"}}));
  ASSERT_EQ(denied.status, 200) << denied.body.dump();
  for (const Json& t : denied.body["tools"]) EXPECT_NE(t["status"], "executed") << denied.body.dump();
  std::vector<Json> events = Events(id, "approval.denied");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["message"], "I still have plenty");
  EXPECT_TRUE(Events(id, "tool.executed").empty());
}

// Without API keys a speaker is who the body says: the approval's approvers (the
// requester, by default) are still the only ones whose answer counts.
TEST_F(ApprovalsTest, AnAnswerFromSomeoneTheApproversDoNotAdmitIs403AndChangesNothing) {
  Start();
  std::string id = NewSession();
  ASSERT_EQ(Post(id, Say("ana", "a refill please")).body["status"], "awaiting_approval");
  Reply other = Post(id, Approve("ben", true));
  EXPECT_EQ(other.status, 403) << other.body.dump();
  EXPECT_EQ(other.body["error"]["code"], "not_an_approver");
  EXPECT_NE(other.body["error"]["message"].get<std::string>().find("ana"), std::string::npos) << other.body.dump();
  EXPECT_EQ(other.body["pending_approval"]["prompt"], "Refill metformin: 120 units?") << "still pending, and said so";
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id)).body["pending_approval"]["tool"], "refill") << "still pending";
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id)).body["turns"], 1) << "the refused answer is no turn";
  Reply own = Post(id, Approve("ana", true));
  ASSERT_EQ(own.status, 200) << own.body.dump();
  EXPECT_EQ(own.body["tools"][0]["status"], "executed");
}

// A key may carry the speakers it speaks for and the roles it acts in (docs/security.md).
TEST_F(ApprovalsTest, AKeysRoleAdmitsItsHolderAndItsSpeakersBindIt) {
  const std::string keys = TempFile("keys.yaml");
  const std::string patient = AddKeyWithBinary(keys, "clinic", "--speaker ana");
  const std::string pharmacist = AddKeyWithBinary(keys, "clinic", "--role pharmacist");
  ASSERT_FALSE(patient.empty());
  ASSERT_FALSE(pharmacist.empty());
  Start({"--keys", keys});
  const Headers as_patient = {{"Authorization", "Bearer " + patient}};
  const Headers as_pharmacist = {{"Authorization", "Bearer " + pharmacist}};

  std::string id = NewSession(as_patient);
  Reply impostor = Post(id, Say("bob", "hello"), as_patient);
  EXPECT_EQ(impostor.status, 403) << impostor.body.dump();
  EXPECT_EQ(impostor.body["error"]["code"], "speaker_not_allowed");

  Reply asked = Post(id, Say("ana", "leave a note for the pharmacist"), as_patient);
  ASSERT_EQ(asked.body["status"], "awaiting_approval") << asked.body.dump();
  EXPECT_EQ(asked.body["approval"]["approvers"], Json::array({"role:pharmacist"}));
  Reply own = Post(id, Approve("ana", true), as_patient);
  EXPECT_EQ(own.status, 403) << "the requester is not among this rule's approvers: " << own.body.dump();
  EXPECT_EQ(own.body["error"]["code"], "not_an_approver");

  Reply decided = Post(id, Approve("dr_lee", true), as_pharmacist);
  ASSERT_EQ(decided.status, 200) << decided.body.dump();
  EXPECT_EQ(decided.body["tools"][0]["status"], "executed");
  std::vector<Json> granted = Events(id, "approval.granted", as_pharmacist);
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0]["by"], "dr_lee");
  EXPECT_EQ(granted[0]["as"], "role:pharmacist");
}

// The approval's deadline is stored with it: a server killed while it waits, restarted
// past its ttl_s, withdraws it, and the answer that comes too late runs nothing.
TEST_F(ApprovalsTest, AnApprovalLapsesAcrossARestart) {
  const std::string db = TempFile("lapse.db");
  TempFile("lapse.db-wal");
  TempFile("lapse.db-shm");
  Start({"--store", "sqlite:" + db});
  std::string id = NewSession();
  Reply asked = Post(id, Say("ana", "hold the insulin for me"));
  ASSERT_EQ(asked.body["status"], "awaiting_approval") << asked.body.dump();
  EXPECT_TRUE(asked.body["approval"].contains("expires_at")) << asked.body.dump();
  server_->Signal(SIGKILL);
  server_->Wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // ttl_s 1, to the next whole second
  Start({"--store", "sqlite:" + db});

  EXPECT_FALSE(Call("GET", url("/v1/sessions/" + id)).body.contains("pending_approval")) << "lapsed: no longer offered";
  Reply late = Post(id, Approve("ana", true));
  ASSERT_EQ(late.status, 200) << late.body.dump();
  EXPECT_TRUE(late.body["tools"].empty()) << late.body.dump();
  EXPECT_NE(late.body["reply"].get<std::string>().find("lapsed"), std::string::npos) << late.body.dump();
  EXPECT_FALSE(late.body.contains("approval"));
  std::vector<Json> lapsed = Events(id, "approval.lapsed");
  ASSERT_EQ(lapsed.size(), 1u);
  EXPECT_EQ(lapsed[0]["tool"], "hold_stock");
  EXPECT_TRUE(Events(id, "tool.executed").empty());
}

TEST_F(ApprovalsTest, AlwaysForThisSessionIsListedAndRevokedThroughItsEndpoint) {
  Start();
  std::string id = NewSession();
  ASSERT_EQ(Post(id, Say("ana", "a refill please")).body["status"], "awaiting_approval");
  Reply always = Post(id, Approve("ana", {{"decision", true}, {"remember", true}}));
  ASSERT_EQ(always.status, 200) << always.body.dump();
  Reply session = Call("GET", url("/v1/sessions/" + id));
  ASSERT_EQ(session.body["remembered_approvals"].size(), 1u) << session.body.dump();
  EXPECT_EQ(session.body["remembered_approvals"][0]["tool"], "refill");

  Reply again = Post(id, Say("ana", "another refill please"));
  EXPECT_EQ(again.body["status"], "completed") << "allowed for the rest of the session: " << again.body.dump();
  EXPECT_EQ(again.body["tools"][0]["status"], "executed");

  EXPECT_EQ(Call("DELETE", url("/v1/sessions/" + id + "/approvals/refill")).status, 204);
  EXPECT_EQ(Call("DELETE", url("/v1/sessions/" + id + "/approvals/refill")).status, 404) << "nothing left to revoke";
  EXPECT_FALSE(Call("GET", url("/v1/sessions/" + id)).body.contains("remembered_approvals"));
  EXPECT_EQ(Post(id, Say("ana", "one more refill")).body["status"], "awaiting_approval") << "asks again";
}

}  // namespace
}  // namespace reins

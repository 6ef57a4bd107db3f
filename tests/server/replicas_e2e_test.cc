// Two `reins serve` processes on one PostgreSQL database, as replicas behind a load
// balancer with no sticky sessions: any replica takes any request of any session, and
// a replica killed with SIGKILL loses no turn it acknowledged.
#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

using testing::Call;
using testing::Reply;
using testing::ServerProcess;

std::string Say(const std::string& text) { return Json{{"speaker", "user"}, {"say", text}}.dump(); }

class ReplicasE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::TestPostgres::Shared().Url(testing::TestPostgres::Shared().NewDatabase());
    a_ = Start();
    b_ = Start();
  }
  std::unique_ptr<ServerProcess> Start() {
    auto s = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--config", "tests/server/agent.yaml", "--store", store_});
    EXPECT_GT(s->port(), 0) << "the replica did not start: " << s->first_line() << s->Log();
    return s;
  }
  static std::string NewSession(const ServerProcess& on) {
    Reply r = Call("POST", on.base_url() + "/v1/sessions", "{}");
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("session_id", "");
  }
  static Reply Turn(const ServerProcess& on, const std::string& session, const std::string& text) {
    return Call("POST", on.base_url() + "/v1/sessions/" + session + "/turns", Say(text));
  }

  std::string store_;
  std::unique_ptr<ServerProcess> a_, b_;
};

TEST_F(ReplicasE2eTest, AnyReplicaTakesAnyRequestOfAnySession) {
  const std::string id = NewSession(*a_);
  Reply prayed = Turn(*b_, id, "Please pray for my mother");  // a deferred write, awaited
  ASSERT_EQ(prayed.status, 200) << prayed.body.dump();
  EXPECT_EQ(prayed.body["tools"][0]["success"], true) << prayed.body.dump();
  Reply hello = Turn(*a_, id, "hello");
  ASSERT_EQ(hello.status, 200) << hello.body.dump();
  Reply session = Call("GET", b_->base_url() + "/v1/sessions/" + id);
  ASSERT_EQ(session.status, 200);
  EXPECT_EQ(session.body["turns"], 2);
  Reply trace = Call("GET", a_->base_url() + "/v1/sessions/" + id + "/trace");
  ASSERT_EQ(trace.status, 200);
  ASSERT_EQ(trace.body["turns"].size(), 2u);
  EXPECT_EQ(Call("GET", b_->base_url() + "/v1/sessions/s_nope").status, 404);
}

TEST_F(ReplicasE2eTest, AReplicaKilledWithSigkillLosesNoAcknowledgedTurn) {
  std::vector<std::string> answered;
  for (int i = 0; i < 8; ++i) {
    const ServerProcess& on = i % 2 == 0 ? *a_ : *b_;
    const std::string id = NewSession(on);
    Reply turn = Turn(on, id, "Please pray for my mother");
    ASSERT_EQ(turn.status, 200) << turn.body.dump();
    answered.push_back(id);
  }
  a_->Signal(SIGKILL);
  a_->Wait();
  for (const std::string& id : answered) {
    Reply session = Call("GET", b_->base_url() + "/v1/sessions/" + id);
    ASSERT_EQ(session.status, 200) << id;
    EXPECT_EQ(session.body["turns"], 1) << id;
    Reply next = Turn(*b_, id, "hello");  // the sessions A served go on through B
    EXPECT_EQ(next.status, 200) << next.body.dump();
    EXPECT_EQ(Call("GET", b_->base_url() + "/v1/sessions/" + id).body["turns"], 2) << id;
  }
}

}  // namespace
}  // namespace reins

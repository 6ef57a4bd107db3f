// Every way a call does not happen, times every way a reply may claim it (issue 73, I5):
// a real turn through the runtime, its call refused by provenance or schema, denied by
// the person, skipped after a stop, failed, or (deferred, `await` mode) failed after
// the reply, and the model's reply claiming it as under way, done, someone else's
// result or to come. The delivered reply never holds the claim, starts with no space,
// and says once what was not done. (Outside data and a withdrawn write: the same rail
// on the same outcomes, tests/policy/undone_claims_test.cc; an uncertain write:
// tests/core/write_ledger_test.cc.)
#include <gtest/gtest.h>

#include "support/runtime_harness.h"

namespace reins {
namespace {

struct Path {
  std::string name;
  std::string send_card;  // the send_card entry's extra keys (YAML, indented 4)
  std::string calls;      // the first response's calls (JSON)
  std::string fixture;    // send_card's fixture
  bool approve = false;   // the call waits for approval, then is denied
  std::string told;       // what the reply says of it
};

constexpr const char* kFriends = R"([{"result": {"data": {"friends": [{"id": "f_ana", "name": "Ana"}]}}}])";
constexpr const char* kSent = R"([{"result": {"data": {"sent": true}}}])";
const std::string kNotDone = "I was not able to complete the card just now, so it has not been done.";

std::vector<Path> Paths() {
  const std::string find = R"({"name": "find_friend", "args": {"name": "Ana"}})";
  auto send = [](const std::string& args) { return R"({"name": "send_card", "args": )" + args + "}"; };
  return {
      {"provenance", "", "[" + send(R"({"friend_id": "f_invented"})") + "]", kSent, false, kNotDone},
      {"schema", "", "[" + send(R"({"friend_id": "f_ana", "message": "Happy birthday to the best friend anyone ever had!"})") + "]",
       kSent, false, kNotDone},
      {"denied", "    approval: required\n", "[" + send(R"({"friend_id": "f_ana"})") + "]", kSent, true,
       "The card was not done: it was not approved."},
      {"skipped", "", "[" + std::string(R"({"name": "check_stock", "args": {}})") + ", " + send(R"({"friend_id": "f_ana"})") + "]",
       kSent, false, kNotDone},
      {"failed", "", "[" + send(R"({"friend_id": "f_ana"})") + "]", R"([{"error": "printer down"}])", false, kNotDone},
      {"failed_deferred_await", "    timing: deferred\n    failure_note: The card could not be sent.\n",
       "[" + send(R"({"friend_id": "f_ana"})") + "]", R"([{"error": "printer down"}])", false, "The card could not be sent."},
  };
}

// The reply shapes of item 3: progressive, perfect, someone else's result, future.
const std::vector<std::string> kShapes = {"I'm sending the birthday card to Ana now.", "I've sent Ana the birthday card.",
                                          "Ana has your card.", "The card will be delivered tomorrow."};

class UndoneRepliesTest : public testing::RuntimeHarness, public ::testing::WithParamInterface<Path> {
 protected:
  void BuildFor(const Path& path, const std::string& shape) {
    const std::string agent = R"(name: cards
model: { provider: scripted }
deferred: { mode: await, timeout_ms: 1000 }
tools:
  - name: find_friend
    annotations: { readOnlyHint: true }
    input_schema: { type: object, properties: { name: { type: string } } }
    entities: { produces: { friend: "$.data.friends[*].id" } }
  - name: check_stock
    annotations: { readOnlyHint: true }
    input_schema: { type: object }
  - name: send_card
    title: card
    description: Sends a birthday card to a friend.
)" + path.send_card + R"(    input_schema:
      type: object
      properties: { friend_id: { type: string }, message: { type: string, maxLength: 20 } }
      required: [friend_id]
    entities: { consumes: { friend_id: friend } }
)";
    const std::string replies = R"([
      {"when": {"turn": 1, "last": "user"}, "tool_calls": [{"name": "find_friend", "args": {"name": "Ana"}}]},
      {"when": {"turn": 1, "after_tool": "find_friend"}, "tool_calls": )" + path.calls + R"(},
      {"when": {"last": "tool"}, "repeat": true, "text": "Thanks for asking. )" + shape + R"( Anything else?"}])";
    agent_yaml_ = agent;
    replies_json_ = replies;
    Build(agent, replies,
          {{"find_friend", kFriends},
           {"check_stock", R"([{"result": {"success": false, "next_action": "error", "error": "out of cards"}}])"},
           {"send_card", path.fixture}});
  }
  std::string agent_yaml_, replies_json_;  // the last BuildFor's, to build again with other fixtures
};

TEST_P(UndoneRepliesTest, TheReplyClaimsNothingAndSaysWhatWasNotDone) {
  const Path& path = GetParam();
  for (const std::string& shape : kShapes) {
    BuildFor(path, shape);
    Result<TurnResult> r = Say("Send Ana a birthday card");
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (path.approve) {
      ASSERT_EQ(r->status, TurnStatus::kAwaitingApproval) << shape;
      TurnInput no;
      no.approve = false;
      r = Run(std::move(no));
      ASSERT_TRUE(r.ok()) << r.status().message();
    }
    ASSERT_EQ(r->status, TurnStatus::kCompleted) << path.name << ": " << shape;
    EXPECT_EQ(Calls("send_card"), path.name.starts_with("failed") ? 1 : 0) << path.name;
    const std::string& reply = r->reply;
    EXPECT_EQ(reply.find(shape), std::string::npos) << path.name << ": the claim reached the person: " << reply;
    EXPECT_TRUE(reply.starts_with("Thanks for asking.")) << path.name << ": " << reply;
    EXPECT_NE(reply.find("Anything else?"), std::string::npos) << path.name << ": " << reply;
    const size_t told = reply.find(path.told);
    EXPECT_NE(told, std::string::npos) << path.name << ": " << reply;
    EXPECT_EQ(reply.find(path.told, told + 1), std::string::npos) << path.name << ": said twice: " << reply;
    EXPECT_EQ(reply.find("Correction"), std::string::npos) << reply;
  }
}

// `await` mode, two cards: the one to David is sent, the one to Maria fails. Claims are
// judged per call, by the words of its arguments: the sentence about David's stays, the
// one about Maria's goes.
TEST_F(UndoneRepliesTest, AFailedDeferredCallTakesOnlyItsOwnClaimAway) {
  Path path = Paths().back();  // failed_deferred_await
  path.calls = R"([{"name": "send_card", "args": {"friend_id": "f_david"}}, {"name": "send_card", "args": {"friend_id": "f_maria"}}])";
  BuildFor(path, "I've sent David the birthday card. I've sent Maria the birthday card.");
  Build(agent_yaml_, replies_json_,
        {{"find_friend", R"([{"result": {"data": {"friends": [{"id": "f_david", "name": "David"}, {"id": "f_maria", "name": "Maria"}]}}}])"},
         {"send_card", R"([{"when": {"args": {"friend_id": "f_david"}}, "result": {"data": {"sent": true}}},
                           {"when": {"args": {"friend_id": "f_maria"}}, "error": "printer down"}])"}});
  Result<TurnResult> r = Say("Send David and Maria a birthday card");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(Calls("send_card"), 2);
  EXPECT_NE(r->reply.find("I've sent David the birthday card."), std::string::npos) << r->reply;
  EXPECT_EQ(r->reply.find("I've sent Maria"), std::string::npos) << r->reply;
  EXPECT_NE(r->reply.find("The card could not be sent."), std::string::npos) << r->reply;
}

INSTANTIATE_TEST_SUITE_P(Paths, UndoneRepliesTest, ::testing::ValuesIn(Paths()),
                         [](const ::testing::TestParamInfo<Path>& p) { return p.param.name; });

}  // namespace
}  // namespace reins

// The Store contract (include/reins/store.h), run against every store: SQLite in a file
// and PostgreSQL (a real server, tests/support/test_postgres.h). Only the interface is
// used, so a store passes by behaving, not by its SQL; sqlite_store_test.cc and
// postgres_store_test.cc look at what only one of them has.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "reins/store.h"
#include "support/sqlite_files.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

class StoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      url_ = testing::TestPostgres::Shared().Url(testing::TestPostgres::Shared().NewDatabase());
    } else {
      path_ = testing::TestDatabasePath("contract");
      url_ = "sqlite:" + path_;
    }
    Reopen();
    ASSERT_TRUE(store_->CreateSession(Session("s1")).ok());
  }
  void TearDown() override {
    store_.reset();
    if (!path_.empty()) {
      testing::RemoveDatabaseFiles(path_);
    }
  }
  // A fresh store on the same database: what another process (or replica) reads.
  void Reopen() {
    store_.reset();
    auto opened = OpenStore(url_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  static SessionRecord Session(const std::string& id, const std::string& tenant = "acme") {
    SessionRecord s;
    s.id = id;
    s.tenant = tenant;
    s.created_at_ms = 1000;
    s.metadata = {{"channel", "web"}};
    s.state = {{"ledger", Json::array()}};
    return s;
  }

  static TurnRecord Turn(int n, const std::string& id, const std::string& session = "s1") {
    TurnRecord t;
    t.session_id = session;
    t.speaker = "user";
    t.input = {{"say", "hello " + std::to_string(n)}};
    t.result.turn_id = id;
    t.result.turn_number = n;
    t.result.reply = "reply " + std::to_string(n);
    t.new_messages = {Message::User("hello " + std::to_string(n), "alice"), Message::Assistant("reply " + std::to_string(n))};
    t.session_state = {{"turn", n}};
    t.created_at_ms = 2000 + n;
    return t;
  }

  static ToolOutcome Deferred(const std::string& key, const std::string& step_id = "") {
    ToolOutcome t;
    t.call_id = "call_" + key;
    t.name = "send_email";
    t.args = {{"to", "ann"}};
    t.status = ToolOutcome::Status::kDeferred;
    t.response_index = 2;  // after the turn's first response's calls
    t.idempotency_key = key;
    t.step_id = step_id;
    return t;
  }

  static PendingClarification Clarify(const std::string& id) {
    PendingClarification p;
    p.id = id;
    p.tool = "find_customer";
    p.entity_type = "customer";
    p.request_text = "refund Smith";
    p.clarification.type = "disambiguation";
    p.clarification.question = "Which Smith?";
    p.clarification.options = {{"c_1", "Ann Smith", "Berlin", 0.75, Json{{"tier", "gold"}}},
                               {"c_2", "Bob Smith", "", std::nullopt, Json(nullptr)}};
    return p;
  }

  std::string url_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContractTest, SessionsReadBackAndAreCountedPerTenant) {
  ASSERT_TRUE(store_->CreateSession(Session("s2", "other")).ok());
  EXPECT_EQ(store_->CreateSession(Session("s1")).code(), StatusCode::kAlreadyExists);
  Reopen();
  auto s = store_->LoadSession("s1");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->tenant, "acme");
  EXPECT_EQ(s->created_at_ms, 1000);
  EXPECT_EQ(s->metadata, Json({{"channel", "web"}}));
  EXPECT_EQ(s->state, Json({{"ledger", Json::array()}}));
  EXPECT_EQ(*store_->LoadTenant("s2"), "other");
  EXPECT_EQ(store_->LoadSession("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->LoadTenant("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->CountSessions("acme"), 1);
  EXPECT_EQ(*store_->CountSessions(std::nullopt), 2);
  ASSERT_EQ(store_->ListSessions()->size(), 2u);
  EXPECT_EQ(store_->ListSessions()->front().id, "s1");
}

// The trace viewer's list: newest first, one tenant's or all, at most `limit`; equal
// creation times by id, newest (largest) first.
TEST_P(StoreContractTest, RecentSessionsAreNewestFirstPerTenant) {
  for (int i = 2; i <= 4; ++i) {
    SessionRecord s = Session("s" + std::to_string(i), i == 3 ? "other" : "acme");
    s.created_at_ms = 1000 + i * 10;
    ASSERT_TRUE(store_->CreateSession(s).ok());
  }
  ASSERT_TRUE(store_->CreateSession(Session("s0")).ok());  // created at 1000, as s1
  // How each one's newest turn ended comes with it: s1 has two turns, s4 one.
  ASSERT_TRUE(store_->CommitTurn(Turn(1, "t1")).ok());
  TurnRecord failed = Turn(2, "t2");
  failed.result.status = TurnStatus::kFailed;
  ASSERT_TRUE(store_->CommitTurn(failed).ok());
  TurnRecord asking = Turn(1, "t3", "s4");
  asking.result.status = TurnStatus::kAwaitingApproval;
  ASSERT_TRUE(store_->CommitTurn(asking).ok());
  auto ids = [](const Result<std::vector<RecentSession>>& r) {
    std::vector<std::string> out;
    for (const RecentSession& s : *r) out.push_back(s.session.id + ":" + s.last_status);
    return out;
  };
  const auto all = store_->RecentSessions(std::nullopt, 10);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(ids(all), (std::vector<std::string>{"s4:awaiting_approval", "s3:", "s2:", "s1:failed", "s0:"}));
  EXPECT_EQ(ids(store_->RecentSessions("acme", 2)), (std::vector<std::string>{"s4:awaiting_approval", "s2:"}));
  EXPECT_EQ(ids(store_->RecentSessions("other", 5)), (std::vector<std::string>{"s3:"}));
  EXPECT_TRUE(store_->RecentSessions("nobody", 5)->empty());
  EXPECT_EQ((*store_->RecentSessions("acme", 1))[0].session.metadata, Json({{"channel", "web"}})) << "whole records";
  // Who opened each, and with what: the first turn's, not the newest's.
  for (const RecentSession& s : *all) {
    const bool opened = s.session.id == "s1" || s.session.id == "s4";
    EXPECT_EQ(s.first_speaker, opened ? "user" : "") << s.session.id;
    EXPECT_EQ(s.first_input, opened ? Json({{"say", "hello 1"}}) : Json()) << s.session.id;
  }
}

TEST_P(StoreContractTest, ACommittedTurnReadsBackCompletely) {
  TurnRecord t = Turn(1, "t1");
  t.result.status = TurnStatus::kAwaitingClarification;
  ToolCall call{"call_1", "find_customer", R"({"name":"Smith"})", {{"name", "Smith"}}, true};
  t.new_messages = {Message::User("refund Smith", "alice"), Message::Assistant("", {call}),
                    Message::Tool("call_1", "find_customer", R"({"matches":2})", false)};
  ResultEnvelope env;
  env.next_action = NextAction::kClarificationNeeded;
  env.data = {{"matches", 2}};
  t.result.tools = {
      {"call_1", "find_customer", {{"name", "Smith"}}, ToolOutcome::Status::kExecuted, "", "", env, 12, 1, 0},
      {"call_0", "drop_db", Json::object(), ToolOutcome::Status::kRejected, "unknown_tool", "no such tool", {}, 0, 1, 1},
      Deferred("t1:2:0")};
  t.result.clarification = Clarify("cl_1");
  t.result.events = {{EventType::kTurnStarted, 1, 10, {{"speaker", "user"}}}, {EventType::kToolExecuted, 1, 11, {{"name", "x"}}}};
  ASSERT_TRUE(store_->CommitTurn(t).ok());
  Reopen();

  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 1);
  EXPECT_EQ(store_->LoadSession("s1")->state, Json({{"turn", 1}}));
  auto msgs = store_->LoadMessages("s1");
  ASSERT_TRUE(msgs.ok()) << msgs.status().ToString();
  ASSERT_EQ(msgs->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(MessageToJson((*msgs)[i]), MessageToJson(t.new_messages[i]));

  auto turns = store_->LoadTurns("s1");
  ASSERT_TRUE(turns.ok()) << turns.status().ToString();
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].status, "awaiting_clarification");
  EXPECT_EQ((*turns)[0].created_at_ms, 2001);
  EXPECT_EQ((*turns)[0].input, t.input);
  EXPECT_EQ((*turns)[0].result, TurnResultToJson(t.result, /*with_tools=*/false));
  ASSERT_EQ((*turns)[0].events.size(), 2u);
  EXPECT_EQ(TraceEventToJson((*turns)[0].events[1]), TraceEventToJson(t.result.events[1]));

  auto inv = store_->LoadInvocations("s1");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->size(), 3u);
  EXPECT_EQ((*inv)[0].success, true);
  EXPECT_EQ((*inv)[0].next_action, "clarification_needed");
  EXPECT_EQ((*inv)[0].result, EnvelopeToJson(env));
  EXPECT_EQ((*inv)[0].latency_ms, 12);
  EXPECT_EQ((*inv)[1].reason, "unknown_tool");
  EXPECT_FALSE((*inv)[1].success.has_value());
  EXPECT_TRUE((*inv)[1].result.is_null());
  EXPECT_TRUE((*inv)[2].deferred);
  ASSERT_EQ(store_->LoadOutbox("s1")->size(), 1u);
  EXPECT_EQ(store_->LoadOutbox("s1")->front().status, "pending");
}

TEST_P(StoreContractTest, AFailedCommitWritesNothing) {
  ASSERT_TRUE(store_->CommitTurn(Turn(1, "t1")).ok());
  TurnRecord dup = Turn(2, "t1");  // the same turn id again
  dup.result.tools = {Deferred("k2")};
  EXPECT_EQ(store_->CommitTurn(dup).code(), StatusCode::kAlreadyExists);
  TurnRecord orphan = Turn(1, "t9", "nope");
  EXPECT_EQ(store_->CommitTurn(orphan).code(), StatusCode::kNotFound);
  TurnRecord stale = Turn(2, "t2");  // answers a clarification that does not exist
  stale.answered_clarification_id = "cl_x";
  stale.result.tools = {Deferred("k3")};
  EXPECT_EQ(store_->CommitTurn(stale).code(), StatusCode::kNotFound);
  Reopen();
  EXPECT_EQ(store_->LoadTurns("s1")->size(), 1u);
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 1);
  EXPECT_TRUE(store_->LoadOutbox("s1")->empty());
}

// A turn that begins its session (TurnRecord::new_session) writes it in its own
// transaction, as the turn leaves it: both are stored or neither is.
TEST_P(StoreContractTest, ATurnThatBeginsItsSessionStoresBothOrNeither) {
  TurnRecord first = Turn(1, "t1", "s2");
  first.new_session = Session("s2", "other");
  first.result.tools = {Deferred("k1")};
  ASSERT_TRUE(store_->CommitTurn(first).ok());
  TurnRecord taken = Turn(1, "t2", "s1");  // a session with this id exists
  taken.new_session = Session("s1");
  EXPECT_EQ(store_->CommitTurn(taken).code(), StatusCode::kAlreadyExists);
  TurnRecord clash = Turn(1, "t1", "s3");  // a new session, but the turn id is taken
  clash.new_session = Session("s3");
  EXPECT_EQ(store_->CommitTurn(clash).code(), StatusCode::kAlreadyExists);
  TurnRecord elsewhere = Turn(1, "t5", "s5");  // begins a session it does not belong to
  elsewhere.new_session = Session("s6");
  EXPECT_EQ(store_->CommitTurn(elsewhere).code(), StatusCode::kInvalidArgument);
  TurnRecord batched = Turn(1, "t4", "s4");
  batched.new_session = Session("s4");
  std::vector<Status> out = store_->CommitTurns({&clash, &batched});
  EXPECT_EQ(out[0].code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(out[1].ok()) << out[1].message();
  Reopen();
  Result<SessionRecord> s2 = store_->LoadSession("s2");
  ASSERT_TRUE(s2.ok()) << s2.status().ToString();
  EXPECT_EQ(s2->tenant, "other");
  EXPECT_EQ(s2->metadata, Json({{"channel", "web"}}));
  EXPECT_EQ(s2->turn_count, 1);
  EXPECT_EQ(s2->state, Json({{"turn", 1}})) << "the state the turn left";
  EXPECT_EQ(store_->LoadTurns("s2")->size(), 1u);
  EXPECT_EQ(store_->LoadOutbox("s2")->size(), 1u);
  EXPECT_TRUE(store_->LoadTurns("s1")->empty());
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 0);
  for (const char* id : {"s3", "s5", "s6"}) EXPECT_EQ(store_->LoadSession(id).status().code(), StatusCode::kNotFound) << id;
  EXPECT_EQ(store_->LoadSession("s4")->turn_count, 1);
  EXPECT_EQ(*store_->CountSessions("acme"), 2);
}

TEST_P(StoreContractTest, ABatchCommitsEachTurnOnItsOwn) {
  ASSERT_TRUE(store_->CreateSession(Session("s2")).ok());
  TurnRecord first = Turn(1, "t1");
  TurnRecord lost = Turn(1, "t_lost", "nope");
  TurnRecord second = Turn(1, "t2", "s2");
  std::vector<Status> out = store_->CommitTurns({&first, &lost, &second});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok()) << out[0].message();
  EXPECT_EQ(out[1].code(), StatusCode::kNotFound);
  EXPECT_TRUE(out[2].ok()) << out[2].message();
  Reopen();
  EXPECT_EQ(store_->LoadSession("s2")->turn_count, 1);
  EXPECT_EQ(store_->LoadTurns("s1")->size(), 1u);
}

// A batch that commits whole stores each turn's own rows: its tools' arguments and
// envelopes, its messages, the state it left (the texts are rendered before the store's
// lock, into rows a thread reuses: a smaller batch after a larger one must not mix them).
TEST_P(StoreContractTest, ABatchThatCommitsWholeStoresEachTurnsOwnRows) {
  for (int size : {3, 2}) {
    std::vector<TurnRecord> turns;
    for (int i = 0; i < size; ++i) {
      const std::string tag = std::to_string(size) + "-" + std::to_string(i);
      TurnRecord t = Turn(1, "t" + tag, "s" + tag);
      t.new_session = Session("s" + tag);
      t.session_state = {{"tag", tag}};
      ResultEnvelope envelope;
      envelope.data = {{"tag", tag}};
      t.result.tools = {{"c" + tag, "lookup", {{"q", tag}}, ToolOutcome::Status::kExecuted, "", "", envelope, 1, 1, 0}};
      turns.push_back(std::move(t));
    }
    std::vector<const TurnRecord*> batch;
    for (const TurnRecord& t : turns) batch.push_back(&t);
    for (const Status& s : store_->CommitTurns(batch)) EXPECT_TRUE(s.ok()) << s.message();
    for (const TurnRecord& t : turns) {
      Result<std::vector<StoredInvocation>> calls = store_->LoadInvocations(t.session_id);
      ASSERT_TRUE(calls.ok()) << calls.status().ToString();
      ASSERT_EQ(calls->size(), 1u) << t.session_id;
      EXPECT_EQ(calls->front().args, t.result.tools[0].args);
      EXPECT_EQ(calls->front().result, EnvelopeToJson(*t.result.tools[0].result));
      EXPECT_EQ(store_->LoadSession(t.session_id)->state, t.session_state);
      EXPECT_EQ(store_->LoadMessages(t.session_id)->size(), 2u);
    }
  }
}

TEST_P(StoreContractTest, TurnsReadBackPageByPage) {
  for (int n = 1; n <= 5; ++n) {
    TurnRecord t = Turn(n, "t" + std::to_string(n));
    t.result.tools = {{"c", "lookup", Json::object(), ToolOutcome::Status::kExecuted, "", "", ResultEnvelope{}, 1, 1, 0}};
    ASSERT_TRUE(store_->CommitTurn(t).ok());
  }
  auto page = store_->LoadTurns("s1", TurnRange{2, 2});
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].turn_number, 3);
  EXPECT_EQ(store_->LoadMessages("s1", TurnRange{3, 10})->size(), 4u);
  auto calls = store_->LoadInvocations("s1", TurnRange{4, 100});
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ(calls->front().turn_id, "t5");
}

TEST_P(StoreContractTest, AnIdempotencyKeyFindsItsTurnAndIsUniquePerSession) {
  TurnRecord t = Turn(1, "t1");
  t.input["idempotency_key"] = "req-1";
  ASSERT_TRUE(store_->CommitTurn(t).ok());
  auto found = store_->FindTurnByKey("s1", "req-1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->turn_id, "t1");
  EXPECT_FALSE(store_->FindTurnByKey("s1", "req-2")->has_value());
  TurnRecord again = Turn(2, "t2");
  again.input["idempotency_key"] = "req-1";
  EXPECT_EQ(store_->CommitTurn(again).code(), StatusCode::kAlreadyExists);
}

TEST_P(StoreContractTest, AConversationDigestLeadsToItsSessionsWithinItsTenant) {
  ASSERT_TRUE(store_->CreateSession(Session("s2")).ok());
  ASSERT_TRUE(store_->CreateSession(Session("s3", "other")).ok());
  EXPECT_TRUE(store_->FindConversation("acme", "d1", 2)->empty());
  ASSERT_TRUE(store_->LinkConversation("acme", "d1", "s2", 5000).ok());
  ASSERT_TRUE(store_->LinkConversation("acme", "d1", "s2", 6000).ok());  // again: nothing changes
  ASSERT_TRUE(store_->LinkConversation("other", "d1", "s3", 4000).ok());
  Reopen();
  EXPECT_EQ(*store_->FindConversation("acme", "d1", 2), std::vector<std::string>{"s2"});
  // Two sessions whose conversations began alike: both are found, oldest link first.
  ASSERT_TRUE(store_->LinkConversation("acme", "d1", "s1", 5500).ok());
  EXPECT_EQ(*store_->FindConversation("acme", "d1", 2), (std::vector<std::string>{"s2", "s1"}));
  EXPECT_EQ(store_->FindConversation("acme", "d1", 1)->size(), 1u);
  EXPECT_EQ(*store_->FindConversation("other", "d1", 2), std::vector<std::string>{"s3"});
  EXPECT_EQ(store_->LinkConversation("acme", "d2", "nope", 1).code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, ClarificationsAreAnsweredOnceAndSuperseded) {
  TurnRecord asks = Turn(1, "t1");
  asks.result.clarification = Clarify("cl_1");
  ASSERT_TRUE(store_->CommitTurn(asks).ok());
  TurnRecord answers = Turn(2, "t2");
  answers.answered_clarification_id = "cl_1";
  answers.chosen_option_id = "c_1";
  ASSERT_TRUE(store_->CommitTurn(answers).ok());
  TurnRecord twice = Turn(3, "t3");
  twice.answered_clarification_id = "cl_1";
  Status refused = store_->CommitTurn(twice);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("is answered, not pending"), std::string::npos) << refused.message();
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 2);
}

// The write-ahead record of an immediate write (pipeline/write_ledger.h): an intent
// once, another try counted only while it runs, an outcome recorded once, all kept
// across a reopen (a restart).
TEST_P(StoreContractTest, AnImmediateWriteIsRecordedAheadAndSettledOnce) {
  WriteRecord intent;
  intent.session_id = "s1";
  intent.key = "w_1";
  intent.turn_id = "t_a";
  intent.tool = "send_card";
  intent.args = Json{{"to", "Ana"}, {"text", "Zoë ✓"}};
  intent.started_ms = 1000;
  ASSERT_EQ(*store_->BeginWrite(intent), std::nullopt) << "new: run it";
  Reopen();
  std::optional<WriteRecord> found = *store_->BeginWrite(intent);
  ASSERT_TRUE(found.has_value()) << "a second try finds the first";
  EXPECT_EQ(found->state, WriteRecord::State::kRunning);
  EXPECT_EQ(found->turn_id, "t_a");
  EXPECT_EQ(found->args, intent.args);
  EXPECT_EQ(found->started_ms, 1000);
  EXPECT_EQ(found->attempts, 1);

  WriteRecord retry = *found;
  retry.turn_id = "t_b";
  ASSERT_TRUE(store_->RetryWrite(retry).ok());
  WriteRecord outcome = retry;
  outcome.state = WriteRecord::State::kSucceeded;
  outcome.result = Json{{"success", true}, {"data", {{"sent", "c_1"}}}};
  outcome.finished_ms = 2000;
  ASSERT_TRUE(store_->FinishWrite(outcome).ok());
  WriteRecord late = outcome;  // the first try, back from the dead
  late.state = WriteRecord::State::kFailed;
  EXPECT_EQ(store_->FinishWrite(late).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->RetryWrite(retry).code(), StatusCode::kAlreadyExists);
  // A write never begun has nothing to retry or finish.
  WriteRecord stranger = outcome;
  stranger.key = "w_never";
  EXPECT_EQ(store_->FinishWrite(stranger).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->RetryWrite(stranger).code(), StatusCode::kNotFound);
  Reopen();

  const std::vector<WriteRecord> writes = *store_->LoadWrites("s1");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].state, WriteRecord::State::kSucceeded);
  EXPECT_EQ(writes[0].attempts, 2);
  EXPECT_EQ(writes[0].turn_id, "t_b");
  EXPECT_EQ(writes[0].result, outcome.result);
  EXPECT_EQ(writes[0].finished_ms, 2000);
  EXPECT_TRUE(store_->LoadWrites("s2")->empty());
  // The same key in another session is another write.
  intent.session_id = "s2";
  EXPECT_EQ(*store_->BeginWrite(intent), std::nullopt);
  // Uncertain: recorded once too, with no result.
  WriteRecord uncertain = intent;
  uncertain.state = WriteRecord::State::kUncertain;
  uncertain.finished_ms = 3000;
  ASSERT_TRUE(store_->FinishWrite(uncertain).ok());
  EXPECT_EQ(store_->BeginWrite(intent)->value().state, WriteRecord::State::kUncertain);
  EXPECT_TRUE(store_->BeginWrite(intent)->value().result.is_null());
}

TEST_P(StoreContractTest, ADeferredCallsOutcomeReachesItsTurn) {
  TurnRecord t = Turn(1, "t1");
  t.result.tools = {Deferred("t1:1:0", "step_1")};
  t.result.plan.push_back(PlanStep{});
  t.result.plan.back().id = "step_1";
  t.result.plan.back().deferred_writes.push_back({"t1:1:0", "send_email"});
  ASSERT_TRUE(store_->CommitTurn(t).ok());
  ASSERT_EQ(store_->UnfinishedOutbox()->size(), 1u);
  EXPECT_TRUE(*store_->ClaimOutbox("t1:1:0", 5000));

  DeferredOutcome o;
  o.key = "t1:1:0";
  o.result.success = false;
  o.result.error = "smtp down";
  o.latency_ms = 40;
  o.events = {{EventType::kDeferredExecuted, 1, 5001, {{"name", "send_email"}}}};
  o.reply = "reply 1 (the email could not be sent)";
  o.notice = "The email to Ann was not sent.";
  o.at_ms = 5001;
  ASSERT_TRUE(store_->RecordDeferredOutcome(o).ok());
  // A repeated delivery (a replica that took the entry over) records nothing more.
  DeferredOutcome repeat = o;
  repeat.result.success = true;
  repeat.notice = "a second notice";
  EXPECT_EQ(store_->RecordDeferredOutcome(repeat).code(), StatusCode::kAlreadyExists);
  Reopen();

  EXPECT_TRUE(store_->UnfinishedOutbox()->empty());
  EXPECT_FALSE(*store_->ClaimOutbox("t1:1:0", 6000));  // done: never runs twice
  EXPECT_EQ(store_->LoadOutbox("s1")->front().attempts, 1);
  auto call = store_->LoadInvocations("s1")->front();
  EXPECT_EQ(call.success, false);
  EXPECT_EQ(call.result, EnvelopeToJson(o.result));
  auto turn = store_->LoadTurns("s1")->front();
  EXPECT_EQ(turn.reply, o.reply);
  EXPECT_EQ(turn.result["reply"], o.reply);
  ASSERT_FALSE(turn.events.empty());
  EXPECT_EQ(turn.events.back().type, EventType::kDeferredExecuted);
  EXPECT_EQ(turn.result["plan"]["steps"][0]["deferredWrites"]["t1:1:0"]["outcome"], "failed");
  EXPECT_EQ(store_->LoadMessages("s1")->back().text, o.reply);  // what the model reads next

  // A shared store's claim says whether a notice waits (SessionClaim::notices): a turn
  // reads them only then.
  auto claim_sees_notices = [this]() {
    auto claim = store_->ClaimSession("s1", "r_a", 60000);
    EXPECT_TRUE(claim.ok() && claim->has_value());
    if (!claim.ok() || !claim->has_value()) return false;
    EXPECT_TRUE(store_->ReleaseSession("s1", (*claim)->token).ok());
    return (*claim)->notices;
  };
  if (store_->shared()) {
    EXPECT_TRUE(claim_sees_notices());
  }
  auto notices = store_->PendingNotices("s1");
  ASSERT_EQ(notices->size(), 1u);
  TurnRecord next = Turn(2, "t2");
  next.delivered_notices = {notices->front().id};
  ASSERT_TRUE(store_->CommitTurn(next).ok());
  EXPECT_TRUE(store_->PendingNotices("s1")->empty());
  if (store_->shared()) {
    EXPECT_FALSE(claim_sees_notices()) << "delivered: none waits";
  }
}

// A streamed reply's writes are staged before the turn exists (I12): its commit makes
// them pending and removes the ones it withdrew; a staged write whose turn never came
// is unfinished, claimable and recordable, as a crash mid-stream leaves it.
TEST_P(StoreContractTest, StagedWritesBecomePendingWithTheirTurnOrWaitForRecovery) {
  auto staged = [](const std::string& key, const std::string& turn) {
    return OutboxEntry{key, "s1", turn, "send_email", Json{{"to", "ann"}}, DeferredMode::kAwait, "staged", 0, nullptr, "", 3000};
  };
  ASSERT_TRUE(store_->StageOutbox({staged("t1:1:0", "t1"), staged("t1:1:1", "t1")}).ok());
  ASSERT_TRUE(store_->StageOutbox({staged("t1:1:0", "t1")}).ok()) << "staged again: left as it is";
  ASSERT_EQ(store_->LoadOutbox("s1")->size(), 2u);
  EXPECT_EQ(store_->LoadOutbox("s1")->front().status, "staged");

  // The turn kept the first write and withdrew the second (it failed before its reply
  // would have been honest about it, say).
  TurnRecord t = Turn(1, "t1");
  t.result.tools = {Deferred("t1:1:0")};
  ToolOutcome withdrawn = Deferred("t1:1:1");
  withdrawn.status = ToolOutcome::Status::kSkipped;
  t.result.tools.push_back(withdrawn);
  t.outbox_staged = true;
  ASSERT_TRUE(store_->CommitTurn(t).ok());
  Reopen();
  auto outbox = store_->LoadOutbox("s1");
  ASSERT_EQ(outbox->size(), 1u);
  EXPECT_EQ(outbox->front().key, "t1:1:0");
  EXPECT_EQ(outbox->front().status, "pending");

  // A crash mid-stream: staged, and its turn never committed.
  ASSERT_TRUE(store_->StageOutbox({staged("t9:1:0", "t9")}).ok());
  auto unfinished = store_->UnfinishedOutbox();
  ASSERT_EQ(unfinished->size(), 2u);
  EXPECT_EQ(unfinished->back().status, "staged");
  EXPECT_TRUE(*store_->ClaimOutbox("t9:1:0", 5000));
  DeferredOutcome o;
  o.key = "t9:1:0";
  o.result.success = false;
  o.result.error = "smtp down";
  o.events = {{EventType::kDeferredExecuted, 1, 5001, {{"name", "send_email"}}}};
  o.notice = "The email to Ann was not sent.";
  o.at_ms = 5001;
  ASSERT_TRUE(store_->RecordDeferredOutcome(o).ok());
  EXPECT_FALSE(*store_->ClaimOutbox("t9:1:0", 6000));
  EXPECT_EQ(store_->PendingNotices("s1")->size(), 1u) << "its failure still reaches the person";
}

TEST_P(StoreContractTest, TheFloorLeaseIsACompareAndSet) {
  Lease ana{"ana", "prayer", 9000, 0};
  EXPECT_EQ(*store_->SetLease("s1", ana, 0), 1);
  EXPECT_EQ(store_->SetLease("s1", Lease{"ben", "prayer", 9000, 0}, 0).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->LoadLease("s1")->owner, "ana");
  // A turn that moves the floor from a stale version writes nothing at all.
  TurnRecord stale = Turn(1, "t1");
  stale.lease_change = Lease{"ben", "prayer", 9500, 0};
  stale.lease_expected_version = 0;
  EXPECT_EQ(store_->CommitTurn(stale).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store_->LoadTurns("s1")->empty());
  TurnRecord releases = Turn(1, "t1");
  releases.lease_change = Lease{};
  releases.lease_expected_version = 1;
  ASSERT_TRUE(store_->CommitTurn(releases).ok());
  EXPECT_EQ(store_->LoadLease("s1")->version, 2);
  EXPECT_EQ(store_->LoadLease("s1")->owner, "");
  EXPECT_EQ(store_->SetLease("nope", ana, 0).status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, TextAnyModelCanWriteIsStored) {
  TurnRecord t = Turn(1, "t1");
  t.result.reply = std::string("nul \0 byte, bad \xC3 utf-8", 23);
  t.new_messages = {Message::Assistant(t.result.reply)};
  ASSERT_TRUE(store_->CommitTurn(t).ok());
  auto turns = store_->LoadTurns("s1");
  ASSERT_TRUE(turns.ok()) << turns.status().ToString();
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_TRUE((*turns)[0].reply.starts_with("nul ")) << (*turns)[0].reply;
  EXPECT_EQ(store_->LoadMessages("s1")->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreContractTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace reins

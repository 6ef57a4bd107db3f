// What only the PostgreSQL store has: replicas migrating together, the connection pool,
// statement timeouts, reconnecting after a server restart, the lease's compare-and-set
// between two stores (two replicas) at once, outbox claims that skip locked rows, and
// the mail replicas send each other. The behaviour both stores
// share is in store_contract_test.cc.
#include "store/postgres_store.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/pg_migrations.h"
#include "support/test_postgres.h"

namespace reins {
namespace {

using testing::TestPostgres;

SessionRecord Session(const std::string& id) {
  SessionRecord s;
  s.id = id;
  s.tenant = "acme";
  s.created_at_ms = 1000;
  return s;
}

TurnRecord Turn(int n, const std::string& id) {
  TurnRecord t;
  t.session_id = "s1";
  t.speaker = "user";
  t.result.turn_id = id;
  t.result.turn_number = n;
  t.new_messages = {Message::User("hello")};
  t.session_state = Json::object();
  return t;
}

std::unique_ptr<PostgresStore> Open(const std::string& url) {
  auto store = PostgresStore::Open(url);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// Sessions s0..s<n-1>, each claimed by replica r_a, and the first turn of each (t0...)
// under its claim; fewer turns when a session could not be made or claimed.
std::vector<TurnRecord> ClaimedTurns(Store& store, int n) {
  std::vector<TurnRecord> turns;
  for (int i = 0; i < n; ++i) {
    const std::string id = "s" + std::to_string(i);
    auto claim = store.CreateSession(Session(id)).ok() ? store.ClaimSession(id, "r_a", 60000)
                                                       : Result<std::optional<SessionClaim>>(Internal("no session"));
    if (!claim.ok() || !claim->has_value()) return turns;
    TurnRecord t = Turn(1, "t" + std::to_string(i));
    t.session_id = id;
    t.claim_token = (*claim)->token;
    turns.push_back(std::move(t));
  }
  return turns;
}

// Session s1 with turn t1, whose deferred send_email waits in the outbox as "t1:1:0".
Status CommitDeferredWrite(Store& store) {
  REINS_RETURN_IF_ERROR(store.CreateSession(Session("s1")));
  TurnRecord t = Turn(1, "t1");
  ToolOutcome call;
  call.name = "send_email";
  call.args = Json::object();
  call.status = ToolOutcome::Status::kDeferred;
  call.idempotency_key = "t1:1:0";
  t.result.tools = {call};
  return store.CommitTurn(t);
}

TEST(PostgresStoreTest, ReplicasStartingTogetherMigrateOnce) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  std::vector<std::thread> replicas;
  std::atomic<int> opened = 0;
  for (int i = 0; i < 4; ++i) {
    replicas.emplace_back([&] {
      if (PostgresStore::Open(pg.Url(db)).ok()) ++opened;
    });
  }
  for (auto& r : replicas) r.join();
  EXPECT_EQ(opened, 4);
  EXPECT_EQ(pg.Query(db, "SELECT COUNT(*) FROM reins_schema"), std::to_string(store::pg::LatestSchemaVersion()));
}

TEST(PostgresStoreTest, ADatabaseFromANewerReinsIsRefused) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  ASSERT_NE(Open(pg.Url(db)), nullptr);
  pg.Query(db, "INSERT INTO reins_schema VALUES (99)");
  auto again = PostgresStore::Open(pg.Url(db));
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("upgrade reins"), std::string::npos);
}

TEST(PostgresStoreTest, UnreachableServersAndBadOptionsSayWhatIsWrong) {
  auto down = PostgresStore::Open("postgres://reins@127.0.0.1:1/reins?connect_timeout=2");
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(down.status().message().find("cannot connect to PostgreSQL"), std::string::npos) << down.status().message();
  auto bad = PostgresStore::Open("postgres://reins@127.0.0.1:1/reins?pool_size=0");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("pool_size=0"), std::string::npos);
}

TEST(PostgresStoreTest, AStoreReconnectsAfterTheServerRestarts) {
  std::unique_ptr<TestPostgres> pg = TestPostgres::StartOwn();
  const std::string db = pg->NewDatabase();
  auto store = Open(pg->Url(db));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateSession(Session("s1")).ok());
  pg->Restart();  // every pooled connection is dropped
  auto s = store->LoadSession("s1");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(store->CommitTurn(Turn(1, "t1")).ok());
}

TEST(PostgresStoreTest, AStatementThatWaitsTooLongIsCutOffAndWritesNothing) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  auto store = Open(pg.Url(db, "statement_timeout_ms=300"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateSession(Session("s1")).ok());
  // Another client holds the session's row: the turn's insert waits on its key.
  PGconn* other = PQconnectdb(pg.Url(db).c_str());
  ASSERT_EQ(PQstatus(other), CONNECTION_OK);
  PQclear(PQexec(other, "BEGIN"));
  PQclear(PQexec(other, "SELECT * FROM sessions WHERE id = 's1' FOR UPDATE"));
  Status cut = store->CommitTurn(Turn(1, "t1"));
  PQclear(PQexec(other, "ROLLBACK"));
  PQfinish(other);
  EXPECT_EQ(cut.code(), StatusCode::kDeadlineExceeded) << cut.ToString();
  EXPECT_EQ(pg.Query(db, "SELECT COUNT(*) FROM turns"), "0");
  EXPECT_TRUE(store->CommitTurn(Turn(1, "t1")).ok());  // the pool's connection is fine afterwards
}

TEST(PostgresStoreTest, ThePoolBoundsTheConnectionsAnyNumberOfThreadsUse) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  auto store = Open(pg.Url(db, "pool_size=2"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateSession(Session("s1")).ok());
  std::atomic<int> failures = 0;
  std::atomic<int> most = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 20; ++k) {
        if (!store->LoadSession("s1").ok()) ++failures;
      }
    });
  }
  threads.emplace_back([&] {
    for (int k = 0; k < 20; ++k) {
      int now = std::stoi(pg.Query(db, "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'reins' "
                                       "AND datname = current_database()"));
      most = std::max(most.load(), now);
    }
  });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_LE(most, 2);
}

TEST(PostgresStoreTest, TwoReplicasRacingForTheFloorGiveItToExactlyOne) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  auto a = Open(pg.Url(db));
  auto b = Open(pg.Url(db));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->CreateSession(Session("s1")).ok());
  std::atomic<int> won = 0;
  std::atomic<int> refused = 0;
  std::vector<std::thread> speakers;
  for (int i = 0; i < 8; ++i) {
    speakers.emplace_back([&, i] {
      PostgresStore& replica = i % 2 == 0 ? *a : *b;
      Result<int64_t> v = replica.SetLease("s1", Lease{"speaker" + std::to_string(i), "prayer", 9000, 0}, 0);
      if (v.ok()) ++won;
      if (v.status().code() == StatusCode::kFailedPrecondition) ++refused;
    });
  }
  for (auto& s : speakers) s.join();
  EXPECT_EQ(won, 1);
  EXPECT_EQ(refused, 7);
  EXPECT_EQ(b->LoadLease("s1")->version, 1);
}

TEST(PostgresStoreTest, AClaimFencesTheCommitOfATurnWhoseClaimLapsed) {
  TestPostgres& pg = TestPostgres::Shared();
  auto store = Open(pg.Url(pg.NewDatabase()));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateSession(Session("s1")).ok());
  EXPECT_EQ(store->ClaimSession("nope", "r_a", 1000).status().code(), StatusCode::kNotFound);
  // A second is a margin for a busy machine between this claim and the next one's look.
  auto first = store->ClaimSession("s1", "r_a", 1000);
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_FALSE(store->ClaimSession("s1", "r_b", 100)->has_value());  // held: the other replica waits
  // Replica A stalls past its claim: B takes the session once the claim lapsed.
  auto second = store->ClaimSession("s1", "r_b", 10000);
  for (int tries = 0; tries < 600 && second.ok() && !second->has_value(); ++tries) {  // a minute at most
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    second = store->ClaimSession("s1", "r_b", 10000);
  }
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_GT((*second)->token, (*first)->token);
  TurnRecord late = Turn(1, "t_a");
  late.claim_token = (*first)->token;
  Status fenced = store->CommitTurn(late);
  EXPECT_EQ(fenced.code(), StatusCode::kAborted) << fenced.ToString();
  EXPECT_TRUE(store->LoadTurns("s1")->empty());
  TurnRecord current = Turn(1, "t_b");
  current.claim_token = (*second)->token;
  EXPECT_TRUE(store->CommitTurn(current).ok());
  ASSERT_TRUE(store->ReleaseSession("s1", (*second)->token).ok());
  auto third = store->ClaimSession("s1", "r_a", 100);
  ASSERT_TRUE(third.ok() && third->has_value());
  EXPECT_EQ((*third)->turn_count, 1);  // the session's version, for the replica's cache
}

// Claims that turns ask for together go in one statement (ClaimSessions), each answered
// as ClaimSession would: taken, held by another replica, or no such session; a session
// asked for twice is claimed once. A commit that ends its claim (release_claim) lets
// another replica take the session at once; one that does not keeps it held.
TEST(PostgresStoreTest, ClaimsTakenTogetherAreAnsweredEachAndACommitCanEndItsClaim) {
  TestPostgres& pg = TestPostgres::Shared();
  auto store = Open(pg.Url(pg.NewDatabase()));
  ASSERT_NE(store, nullptr);
  for (const char* id : {"s1", "s2", "s3"}) ASSERT_TRUE(store->CreateSession(Session(id)).ok());
  auto held = store->ClaimSession("s2", "r_b", 60000);
  ASSERT_TRUE(held.ok() && held->has_value());
  const ClaimRequest s3{"s3", "r_a", 60000}, s2{"s2", "r_a", 60000}, nope{"nope", "r_a", 60000}, s1{"s1", "r_a", 60000},
      s3_again{"s3", "r_a", 60000};
  auto claims = store->ClaimSessions({&s3, &s2, &nope, &s1, &s3_again});
  ASSERT_EQ(claims.size(), 5u);
  ASSERT_TRUE(claims[0].ok() && claims[0]->has_value()) << claims[0].status().ToString();
  EXPECT_TRUE(claims[1].ok() && !claims[1]->has_value()) << "held by r_b";
  EXPECT_EQ(claims[2].status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(claims[3].ok() && claims[3]->has_value());
  EXPECT_TRUE(claims[4].ok() && !claims[4]->has_value()) << "asked twice, claimed once";
  EXPECT_EQ((*claims[0])->turn_count, 0);
  EXPECT_GT((*claims[0])->token, 0);
  EXPECT_FALSE(store->ClaimSession("s1", "r_b", 60000)->has_value()) << "s1 is r_a's";

  TurnRecord ends = Turn(1, "t1");
  ends.session_id = "s1";
  ends.claim_token = (*claims[3])->token;
  ends.release_claim = true;
  TurnRecord keeps = Turn(1, "t3");
  keeps.session_id = "s3";
  keeps.claim_token = (*claims[0])->token;
  std::vector<Status> out = store->CommitTurns({&ends, &keeps});
  ASSERT_TRUE(out[0].ok() && out[1].ok()) << out[0].ToString() << " " << out[1].ToString();
  auto next = store->ClaimSession("s1", "r_b", 60000);
  ASSERT_TRUE(next.ok() && next->has_value()) << "the commit ended r_a's claim";
  EXPECT_EQ((*next)->turn_count, 1);
  EXPECT_FALSE(store->ClaimSession("s3", "r_b", 60000)->has_value()) << "its deferred calls would still run under it";
}

// A batch that commits whole goes as one transaction whose turns' rows and sessions'
// fences are one statement each (arrays): every turn reads back as it was written,
// text that needs escaping in an array included, with its tool calls, deferred writes
// and idempotency key.
TEST(PostgresStoreTest, ABatchInOneTransactionStoresEachTurnAsItWasWritten) {
  TestPostgres& pg = TestPostgres::Shared();
  auto store = Open(pg.Url(pg.NewDatabase()));
  ASSERT_NE(store, nullptr);
  std::vector<TurnRecord> turns = ClaimedTurns(*store, 3);
  ASSERT_EQ(turns.size(), 3u);
  for (int i = 0; i < 3; ++i) turns[i].session_state = Json{{"n", i}};
  turns[0].result.reply = "say \"hi\" \\ {a,b} NULL \u00e9";
  turns[1].input = Json{{"say", "x"}, {"idempotency_key", "k-1"}};
  ToolOutcome call;
  call.name = "send_email";
  call.args = Json{{"to", "ann"}};
  call.status = ToolOutcome::Status::kDeferred;
  call.idempotency_key = "t2:1:0";
  turns[2].result.tools = {call};
  turns[0].release_claim = true;
  std::vector<const TurnRecord*> batch;
  for (const TurnRecord& t : turns) batch.push_back(&t);
  std::vector<Status> out = store->CommitTurns(batch);
  for (const Status& status : out) EXPECT_TRUE(status.ok()) << status.ToString();
  auto first = store->LoadTurns("s0");
  ASSERT_TRUE(first.ok() && first->size() == 1u);
  EXPECT_EQ(first->front().reply, turns[0].result.reply);
  EXPECT_EQ(store->LoadSession("s2")->state, (Json{{"n", 2}}));
  EXPECT_EQ(store->LoadSession("s2")->turn_count, 1);
  EXPECT_TRUE(store->ClaimSession("s0", "r_b", 60000)->has_value()) << "its commit ended its claim";
  EXPECT_FALSE(store->ClaimSession("s1", "r_b", 60000)->has_value());
  auto outbox = store->LoadOutbox("s2");
  ASSERT_TRUE(outbox.ok() && outbox->size() == 1u);
  EXPECT_EQ(outbox->front().key, "t2:1:0");
  EXPECT_EQ(store->LoadInvocations("s2")->size(), 1u);
  EXPECT_EQ(store->LoadMessages("s1")->size(), 1u);
  auto keyed = store->FindTurnByKey("s1", "k-1");
  ASSERT_TRUE(keyed.ok() && keyed->has_value());
  EXPECT_EQ((*keyed)->turn_id, "t1");
  EXPECT_FALSE(store->FindTurnByKey("s0", "")->has_value()) << "no key: NULL, not an empty key";
}

// A group commit goes as one pipeline, a turn a segment (store/pg_pipeline.h): a turn
// whose claim lapsed, or whose id is taken, fails alone, and the turns around it commit.
// More turns than one round trip takes (64) go in several.
TEST(PostgresStoreTest, ABatchCommitsEachTurnOnItsOwnInOnePipeline) {
  TestPostgres& pg = TestPostgres::Shared();
  auto store = Open(pg.Url(pg.NewDatabase()));
  ASSERT_NE(store, nullptr);
  constexpr int kSessions = 100;
  std::vector<TurnRecord> turns = ClaimedTurns(*store, kSessions);
  ASSERT_EQ(turns.size(), static_cast<size_t>(kSessions));
  turns[10].claim_token += 1;       // its claim lapsed and another replica holds the session
  turns[70].result.turn_id = "t3";  // a turn id another turn of the batch has
  std::vector<const TurnRecord*> batch;
  for (const TurnRecord& t : turns) batch.push_back(&t);
  std::vector<Status> out = store->CommitTurns(batch);
  ASSERT_EQ(out.size(), batch.size());
  for (int i = 0; i < kSessions; ++i) {
    const std::string id = "s" + std::to_string(i);
    if (i == 10) {
      EXPECT_EQ(out[i].code(), StatusCode::kAborted) << out[i].ToString();
      EXPECT_NE(out[i].message().find("claim on the session lapsed"), std::string::npos) << out[i].message();
    } else if (i == 70) {
      EXPECT_EQ(out[i].code(), StatusCode::kAlreadyExists) << out[i].ToString();
    } else {
      EXPECT_TRUE(out[i].ok()) << i << ": " << out[i].ToString();
    }
    const bool stored = i != 10 && i != 70;
    EXPECT_EQ(store->LoadSession(id)->turn_count, stored ? 1 : 0) << id;
    EXPECT_EQ(store->LoadTurns(id)->size(), stored ? 1u : 0u) << id;
  }
}

TEST(PostgresStoreTest, ADeferredCallRunningOnAnotherReplicaIsNotTakenOver) {
  TestPostgres& pg = TestPostgres::Shared();
  auto store = Open(pg.Url(pg.NewDatabase()));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(CommitDeferredWrite(*store).ok());
  EXPECT_TRUE(*store->ClaimOutbox("t1:1:0", 10000));            // replica A runs it
  EXPECT_FALSE(*store->ClaimOutbox("t1:1:0", 12000));           // B, resuming its outbox, leaves it
  EXPECT_TRUE(*store->ClaimOutbox("t1:1:0", 10000 + 301000));   // A died long ago: B takes it over
  EXPECT_EQ(store->LoadOutbox("s1")->front().attempts, 2);
}

TEST(PostgresStoreTest, AnOutboxEntryAnotherReplicaIsClaimingIsPassedByNotWaitedFor) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  auto store = Open(pg.Url(db, "statement_timeout_ms=20000"));  // a claim queued behind the lock would wait it out
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(CommitDeferredWrite(*store).ok());
  // Another replica has the entry's row locked (claiming or settling it right now).
  PGconn* other = PQconnectdb(pg.Url(db).c_str());
  ASSERT_EQ(PQstatus(other), CONNECTION_OK);
  PQclear(PQexec(other, "BEGIN"));
  PQclear(PQexec(other, "SELECT * FROM outbox WHERE key = 't1:1:0' FOR UPDATE"));
  const auto start = std::chrono::steady_clock::now();
  Result<bool> passed = store->ClaimOutbox("t1:1:0", 10000);
  const auto waited = std::chrono::steady_clock::now() - start;
  PQclear(PQexec(other, "ROLLBACK"));
  PQfinish(other);
  ASSERT_TRUE(passed.ok()) << passed.status().ToString();
  EXPECT_FALSE(*passed);
  EXPECT_LT(waited, std::chrono::milliseconds(10000)) << "SKIP LOCKED: the claim does not queue behind the lock";
  EXPECT_TRUE(*store->ClaimOutbox("t1:1:0", 10000));  // unlocked and still pending: now it is taken
}

TEST(PostgresStoreTest, MailBetweenReplicasIsTakenOrWithdrawnNeverBoth) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  auto a = Open(pg.Url(db));
  auto b = Open(pg.Url(db));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // The question mark: one holder per session; only the holder's own unmark removes it.
  EXPECT_EQ(a->MarkQuestion("s1", {"A", 1000})->replica, "");
  EXPECT_EQ(b->QuestionHolder("s1")->replica, "A");
  QuestionMark superseded = *b->MarkQuestion("s1", {"B", 1100});
  EXPECT_EQ(superseded.replica, "A") << "B's question supersedes A's";
  EXPECT_EQ(superseded.asked_at_ms, 1000);
  EXPECT_EQ(b->MarkQuestion("s1", {"A", 1200})->replica, "B");
  EXPECT_EQ(b->QuestionHolder("s1")->asked_at_ms, 1200);
  EXPECT_EQ(b->QuestionHolder("s2")->replica, "");
  ASSERT_TRUE(b->UnmarkQuestion("s1", "B").ok());
  EXPECT_EQ(b->QuestionHolder("s1")->replica, "A");
  ASSERT_TRUE(a->UnmarkQuestion("s1", "A").ok());
  EXPECT_EQ(b->QuestionHolder("s1")->replica, "");

  // Sent, taken, replied, collected once.
  const int64_t id = *b->SendMail("A", Json{{"kind", "answer"}}, 2000);
  EXPECT_EQ(b->CollectMail(id)->stage, MailState::Stage::kUnread);
  EXPECT_TRUE(a->TakeMail("B")->empty()) << "mail to A is A's alone";
  std::vector<ReplicaMail> taken = *a->TakeMail("A");
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].id, id);
  EXPECT_EQ(taken[0].body["kind"], "answer");
  EXPECT_TRUE(a->TakeMail("A")->empty()) << "taken once";
  EXPECT_EQ(b->CollectMail(id)->stage, MailState::Stage::kTaken);
  ASSERT_TRUE(a->ReplyMail(id, Json{{"ok", true}}).ok());
  MailState replied = *b->CollectMail(id);
  EXPECT_EQ(replied.stage, MailState::Stage::kReplied);
  EXPECT_EQ(replied.reply["ok"], true);
  EXPECT_EQ(b->CollectMail(id)->stage, MailState::Stage::kGone);

  // Withdrawn unread: the holder never sees it, and cannot reply to it.
  const int64_t unread = *b->SendMail("A", Json::object(), 3000);
  EXPECT_TRUE(*b->WithdrawMail(unread));
  EXPECT_TRUE(a->TakeMail("A")->empty());
  EXPECT_EQ(a->ReplyMail(unread, Json::object()).code(), StatusCode::kNotFound);
  // Taken mail cannot be withdrawn; discarded, its reply finds nobody.
  const int64_t taken_mail = *b->SendMail("A", Json::object(), 3100);
  ASSERT_EQ(a->TakeMail("A")->size(), 1u);
  EXPECT_FALSE(*b->WithdrawMail(taken_mail));
  EXPECT_EQ(b->CollectMail(taken_mail)->stage, MailState::Stage::kTaken);
  ASSERT_TRUE(b->DiscardMail(taken_mail).ok());
  EXPECT_EQ(a->ReplyMail(taken_mail, Json::object()).code(), StatusCode::kNotFound);
  // What replicas that died left behind is swept by age.
  (void)*b->SendMail("Z", Json::object(), 100);
  ASSERT_TRUE(a->MarkQuestion("s9", {"Z", 100}).ok());
  ASSERT_TRUE(a->SweepMail(500).ok());
  EXPECT_EQ(b->QuestionHolder("s9")->replica, "");
  EXPECT_EQ(pg.Query(db, "SELECT COUNT(*) FROM replica_mail WHERE recipient = 'Z'"), "0");

  // Taken and withdrawn at the same instant by two replicas: exactly one of them wins.
  for (int i = 0; i < 40; ++i) {
    const int64_t raced = *b->SendMail("A", Json::object(), 4000 + i);
    std::atomic<bool> go{false};
    size_t took = 0;
    bool withdrew = false;
    std::thread holder([&] {
      while (!go) {
      }
      took = a->TakeMail("A")->size();
    });
    std::thread sender([&] {
      while (!go) {
      }
      withdrew = *b->WithdrawMail(raced);
    });
    go = true;
    holder.join();
    sender.join();
    EXPECT_EQ(took + (withdrew ? 1 : 0), 1u) << "round " << i;
    (void)b->DiscardMail(raced);  // the taken mail too, before the next round
  }
}

TEST(PostgresStoreTest, SessionEventsReachTheOtherReplicasSmallAndLarge) {
  TestPostgres& pg = TestPostgres::Shared();
  const std::string db = pg.NewDatabase();
  auto a = Open(pg.Url(db));
  auto b = Open(pg.Url(db));
  ASSERT_TRUE(a && b);
  std::mutex mu;
  std::vector<std::pair<std::string, TraceEvent>> at_a, at_b;
  auto into = [&mu](auto* list) {
    return [&mu, list](const std::string& session, const TraceEvent& e) {
      std::lock_guard lock(mu);
      list->emplace_back(session, e);
    };
  };
  auto relay_a = a->RelayEvents(into(&at_a));
  auto relay_b = b->RelayEvents(into(&at_b));
  ASSERT_TRUE(relay_a.ok() && relay_b.ok() && *relay_a && *relay_b);
  // Both are listening once each relay's connection has run its LISTEN, its first
  // statement (waited for: what is sent before a relay listens never reaches it).
  bool listening = false;
  for (int tries = 0; tries < 3000 && !listening; ++tries) {  // a minute at most
    listening = pg.Query(db, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                             "AND query LIKE 'LISTEN%' AND state = 'idle'") == "2";
    if (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(listening) << "the relays never listened";
  TraceEvent small{EventType::kNotice, 2, 1000, Json{{"text", "saved"}}};
  TraceEvent large{EventType::kNotice, 3, 2000, Json{{"text", std::string(20000, 'x')}}};  // over NOTIFY's 8,000 bytes
  // One event as a replica from before batched relays sends it (a rolling upgrade).
  const std::string old_form = Json{{"o", "r_old"}, {"s", "s0"}, {"e", TraceEventToJson(small)}}.dump();
  pg.Query(db, "SELECT pg_notify('reins_events', '" + old_form + "')");
  for (int i = 0; i < 3000; ++i) {  // a minute at most
    {
      std::lock_guard lock(mu);
      if (!at_a.empty() && !at_b.empty()) break;  // sent by neither relay: both hear it
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(at_a.size(), 1u) << "the old form is read";
    ASSERT_EQ(at_b.size(), 1u) << "the old form is read";
    EXPECT_EQ(at_b[0].first, "s0");
    at_a.clear();
    at_b.clear();
  }
  (*relay_a)->Publish("s1", small);
  (*relay_a)->Publish("s1", large);
  // Many at once: they go in few notifications (several payloads of one statement),
  // and arrive whole and in order.
  constexpr int kMany = 300;
  for (int i = 0; i < kMany; ++i) {
    const TraceEvent numbered{EventType::kNotice, 4, 3000 + i, Json{{"text", "n" + std::to_string(i)}}};
    (*relay_a)->Publish("s" + std::to_string(i % 7), numbered);
  }
  for (int i = 0; i < 3000; ++i) {  // a minute at most
    {
      std::lock_guard lock(mu);
      if (at_b.size() >= 2 + kMany) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::lock_guard lock(mu);
  ASSERT_EQ(at_b.size(), 2u + kMany);
  EXPECT_EQ(at_b[0].first, "s1");
  EXPECT_EQ(at_b[0].second.data, small.data);
  EXPECT_EQ(at_b[0].second.turn, 2);
  EXPECT_EQ(at_b[1].second.data, large.data);
  for (int i = 0; i < kMany; ++i) {
    EXPECT_EQ(at_b[2 + i].first, "s" + std::to_string(i % 7));
    EXPECT_EQ(at_b[2 + i].second.data, (Json{{"text", "n" + std::to_string(i)}})) << i;
  }
  EXPECT_TRUE(at_a.empty()) << "a replica does not hear its own events back";
}

}  // namespace
}  // namespace reins

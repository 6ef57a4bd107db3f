// CommitQueue: turns that reach their commit in the same pass of the event loop are
// written in one batch, and each gets its own status back.
#include "pipeline/commit_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "store/sqlite_store.h"

namespace reins {
namespace {

// A store that passes everything to `inner` and counts the batches it is asked to write.
class BatchSpy final : public Store {
 public:
  explicit BatchSpy(Store& inner) : inner_(inner) {}
  std::vector<size_t> batches;
  std::vector<Status> CommitTurns(const std::vector<const TurnRecord*>& turns) override {
    batches.push_back(turns.size());
    return inner_.CommitTurns(turns);
  }
  Status CommitTurn(const TurnRecord& t) override { return inner_.CommitTurn(t); }
  Status CreateSession(const SessionRecord& s) override { return inner_.CreateSession(s); }
  Result<SessionRecord> LoadSession(const std::string& id) override { return inner_.LoadSession(id); }
  Result<std::vector<SessionRecord>> ListSessions() override { return inner_.ListSessions(); }
  Result<int64_t> CountSessions(std::optional<std::string> t) override { return inner_.CountSessions(t); }
  Result<std::vector<Message>> LoadMessages(const std::string& id, TurnRange r) override { return inner_.LoadMessages(id, r); }
  Result<std::vector<StoredTurn>> LoadTurns(const std::string& id, TurnRange r) override { return inner_.LoadTurns(id, r); }
  Result<std::vector<StoredInvocation>> LoadInvocations(const std::string& id, TurnRange r) override {
    return inner_.LoadInvocations(id, r);
  }
  Result<std::optional<StoredTurn>> FindTurnByKey(const std::string& id, const std::string& key) override {
    return inner_.FindTurnByKey(id, key);
  }
  Status LinkConversation(const std::string& t, const std::string& d, const std::string& id, int64_t at) override {
    return inner_.LinkConversation(t, d, id, at);
  }
  Result<std::vector<std::string>> FindConversation(const std::string& t, const std::string& d, int limit) override {
    return inner_.FindConversation(t, d, limit);
  }
  Result<bool> ClaimOutbox(const std::string& key, int64_t now) override { return inner_.ClaimOutbox(key, now); }
  Status StageOutbox(const std::vector<OutboxEntry>& e) override { return inner_.StageOutbox(e); }
  Status RecordDeferredOutcome(const DeferredOutcome& o) override { return inner_.RecordDeferredOutcome(o); }
  Result<std::vector<OutboxEntry>> UnfinishedOutbox() override { return inner_.UnfinishedOutbox(); }
  Result<std::vector<OutboxEntry>> LoadOutbox(const std::string& id) override { return inner_.LoadOutbox(id); }
  Result<std::vector<Notice>> PendingNotices(const std::string& id) override { return inner_.PendingNotices(id); }
  Result<Lease> LoadLease(const std::string& id) override { return inner_.LoadLease(id); }
  Result<int64_t> SetLease(const std::string& id, const Lease& l, int64_t v) override { return inner_.SetLease(id, l, v); }

 private:
  Store& inner_;
};

TurnRecord Turn(const std::string& session, const std::string& id) {
  TurnRecord t;
  t.session_id = session;
  t.result.turn_id = id;
  t.result.turn_number = 1;
  t.new_messages = {Message::User("hello", "user"), Message::Assistant("hi")};
  return t;
}

// A queue over a store holding sessions s1 and s2, written inline (a one-process store)
// or on the store's own threads (a shared store).
class CommitQueueTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    for (const char* id : {"s1", "s2"}) {
      SessionRecord s;
      s.id = id;
      ASSERT_TRUE(spy.CreateSession(s).ok());
    }
  }

  std::unique_ptr<SqliteStore> sqlite = SqliteStore::Open(":memory:").value();
  BatchSpy spy{*sqlite};
  StoreCalls calls{spy, GetParam()};
  CommitQueue queue{calls};
  boost::asio::io_context io;
};

TEST_P(CommitQueueTest, TurnsThatFinishTogetherCommitInOneBatchWithTheirOwnStatus) {
  std::vector<TurnRecord> turns = {Turn("s1", "t1"), Turn("nope", "t2"), Turn("s2", "t3")};
  std::vector<Status> statuses(turns.size(), Internal("not run"));
  for (size_t i = 0; i < turns.size(); ++i) {
    boost::asio::co_spawn(io, [&, i]() -> Task<void> { statuses[i] = co_await queue.Commit(turns[i]); },
                          boost::asio::detached);
  }
  io.run();
  EXPECT_EQ(spy.batches, (std::vector<size_t>{3})) << "three turns ready in one pass, one batch";
  EXPECT_TRUE(statuses[0].ok()) << statuses[0].message();
  EXPECT_EQ(statuses[1].code(), StatusCode::kNotFound);
  EXPECT_TRUE(statuses[2].ok()) << statuses[2].message();

  // A lone turn later is a batch of its own.
  TurnRecord later = Turn("s1", "t4");
  later.result.turn_number = 2;
  Status status = Internal("not run");
  boost::asio::co_spawn(io, [&]() -> Task<void> { status = co_await queue.Commit(later); }, boost::asio::detached);
  io.restart();
  io.run();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(spy.batches, (std::vector<size_t>{3, 1}));
}

// A turn that commits again as soon as its first commit resumes it joins a batch of its
// own, and the turns after it in the first batch still get theirs, in order.
TEST_P(CommitQueueTest, ATurnThatCommitsAgainAsItIsResumedStartsTheNextBatch) {
  TurnRecord first = Turn("s1", "t1"), again = Turn("s1", "t2"), other = Turn("s2", "t3");
  again.result.turn_number = 2;
  Status first_status = Internal("not run"), again_status = Internal("not run"), other_status = Internal("not run");
  std::vector<std::string> order;
  boost::asio::co_spawn(io, [&]() -> Task<void> {
    first_status = co_await queue.Commit(first);
    order.push_back("t1");
    again_status = co_await queue.Commit(again);
    order.push_back("t2");
  }, boost::asio::detached);
  boost::asio::co_spawn(io, [&]() -> Task<void> {
    other_status = co_await queue.Commit(other);
    order.push_back("t3");
  }, boost::asio::detached);
  io.run();
  EXPECT_TRUE(first_status.ok()) << first_status.message();
  EXPECT_TRUE(again_status.ok()) << again_status.message();
  EXPECT_TRUE(other_status.ok()) << other_status.message();
  EXPECT_EQ(spy.batches, (std::vector<size_t>{2, 1}));
  if (GetParam() == 0) {
    EXPECT_EQ(order, (std::vector<std::string>{"t1", "t3", "t2"})) << "the first batch's turns resume first";
  } else {
    // The store's threads post each turn's resumption in turn: the second batch may be
    // written, and t2 resumed, before t3's resumption is posted.
    ASSERT_EQ(order.size(), 3u);
    EXPECT_LT(std::find(order.begin(), order.end(), "t1"), std::find(order.begin(), order.end(), "t2"));
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, CommitQueueTest, ::testing::Values(0, 2),
                         [](const auto& info) { return info.param == 0 ? "inline" : "offloaded"; });

}  // namespace
}  // namespace reins

#include "store/sqlite_store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <string>

#include "reins/store.h"
#include "store/migrations.h"
#include "store/row_json.h"
#include "support/sqlite_files.h"

namespace reins {
namespace {

// Every test gets its own file database under /tmp so the test can look at the rows
// the Store interface does not expose (clarifications, raw seqs) through a second
// connection, exactly as `reins trace` would.
class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TestDatabasePath("store_test");
    testing::RemoveDatabaseFiles(path_);
    Reopen();
    ASSERT_TRUE(store_->CreateSession(Session("s1")).ok());
  }
  void TearDown() override {
    store_.reset();
    testing::RemoveDatabaseFiles(path_);
  }
  void Reopen() {
    store_.reset();
    auto opened = SqliteStore::Open(path_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  static SessionRecord Session(const std::string& id) {
    SessionRecord s;
    s.id = id;
    s.tenant = "acme";
    s.created_at_ms = 1000;
    s.metadata = {{"channel", "web"}};
    s.state = {{"ledger", Json::array()}};
    return s;
  }

  // A plain completed turn number `n` of session s1 with two messages.
  static TurnRecord Turn(int n, const std::string& id) {
    TurnRecord t;
    t.session_id = "s1";
    t.speaker = "user";
    t.input = {{"say", "hello " + std::to_string(n)}};
    t.result.turn_id = id;
    t.result.turn_number = n;
    t.result.reply = "reply " + std::to_string(n);
    t.new_messages = {Message::User("hello " + std::to_string(n), "alice"),
                      Message::Assistant("reply " + std::to_string(n))};
    t.session_state = {{"turn", n}};
    t.created_at_ms = 2000 + n;
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

  // Reads one value through an independent read-only connection.
  int64_t Int(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
  std::string Text(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getString();
  }
  // Row counts of every table a turn writes, to prove a failed commit wrote nothing.
  std::string Counts() {
    std::string out;
    for (const char* table : {"turns", "tool_invocations", "clarifications", "clarification_options", "outbox"}) {
      out += std::string(table) + "=" + std::to_string(Int(std::string("SELECT COUNT(*) FROM ") + table)) + " ";
    }
    return out + "state=" + Text("SELECT state || turn_count FROM sessions WHERE id = 's1'");
  }

  std::string path_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreTest, CreatedSessionLoadsBackWithAllFields) {
  auto s = store_->LoadSession("s1");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->tenant, "acme");
  EXPECT_EQ(s->created_at_ms, 1000);
  EXPECT_EQ(s->metadata, Json({{"channel", "web"}}));
  EXPECT_EQ(s->state, Json({{"ledger", Json::array()}}));
  EXPECT_EQ(s->turn_count, 0);

  ASSERT_TRUE(store_->CreateSession(Session("s0")).ok());
  auto all = store_->ListSessions();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "s0");  // same created_at: ordered by id
}

TEST_F(SqliteStoreTest, ATenantIsReadWithoutTheSession) {
  EXPECT_EQ(store_->LoadTenant("s1").value(), "acme");
  EXPECT_EQ(store_->LoadTenant("nope").status().code(), StatusCode::kNotFound);
}

TEST_F(SqliteStoreTest, UnknownSessionIsNotFound) {
  auto s = store_->LoadSession("nope");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s.status().message(), "session 'nope' does not exist");
  EXPECT_EQ(store_->LoadMessages("nope").status().code(), StatusCode::kNotFound);
  TurnRecord t = Turn(1, "t1");
  t.session_id = "nope";
  EXPECT_EQ(store_->CommitTurn(t).code(), StatusCode::kNotFound);
}

// Group commit: one transaction, each turn all or nothing on its own.
TEST_F(SqliteStoreTest, ABatchCommitsEachTurnOnItsOwn) {
  ASSERT_TRUE(store_->CreateSession(Session("s2")).ok());
  TurnRecord first = Turn(1, "t1");
  TurnRecord lost = Turn(1, "t_lost");
  lost.session_id = "nope";  // no such session: this turn alone is refused
  TurnRecord second = Turn(1, "t2");
  second.session_id = "s2";
  std::vector<Status> out = store_->CommitTurns({&first, &lost, &second});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok()) << out[0].message();
  EXPECT_EQ(out[1].code(), StatusCode::kNotFound);
  EXPECT_TRUE(out[2].ok()) << out[2].message();
  Reopen();  // what is on disk
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 1);
  EXPECT_EQ(store_->LoadSession("s2")->turn_count, 1);
  ASSERT_EQ(store_->LoadMessages("s2")->size(), 2u);
  EXPECT_EQ(store_->LoadTurns("s1")->size(), 1u);
}

TEST_F(SqliteStoreTest, CreatingAnExistingSessionIsAlreadyExists) {
  auto again = store_->CreateSession(Session("s1"));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
}

TEST_F(SqliteStoreTest, CommittedTurnReadsBackCompletely) {
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
      {"call_2", "refund", {{"amount", 5}}, ToolOutcome::Status::kSkipped, "chain_stopped", "", {}, 0, 1, 1},
      {"call_0", "drop_db", Json::object(), ToolOutcome::Status::kRejected, "unknown_tool", "no such tool", {}, 0,
       1, 2},
      {"call_3", "email", {{"to", "x"}}, ToolOutcome::Status::kDeferred, "", "", {}, 0, 2, 0}};
  t.result.clarification = Clarify("cl_1");
  t.result.events = {{EventType::kTurnStarted, 1, 10, {{"speaker", "user"}}}, {EventType::kToolExecuted, 1, 11, {{"name", "x"}}}};
  ASSERT_TRUE(store_->CommitTurn(t).ok());

  auto s = store_->LoadSession("s1");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->turn_count, 1);
  EXPECT_EQ(s->state, Json({{"turn", 1}}));

  auto msgs = store_->LoadMessages("s1");
  ASSERT_TRUE(msgs.ok());
  ASSERT_EQ(msgs->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(MessageToJson((*msgs)[i]), MessageToJson(t.new_messages[i]));

  auto turns = store_->LoadTurns("s1");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 1u);
  const StoredTurn& st = (*turns)[0];
  EXPECT_EQ(st.turn_id, "t1");
  EXPECT_EQ(st.status, "awaiting_clarification");
  EXPECT_EQ(st.speaker, "user");
  EXPECT_EQ(st.reply, "reply 1");
  EXPECT_EQ(st.created_at_ms, 2001);
  EXPECT_EQ(st.input, t.input);
  EXPECT_EQ(st.result, TurnResultToJson(t.result, /*with_tools=*/false));
  ASSERT_EQ(st.events.size(), 2u);
  EXPECT_EQ(TraceEventToJson(st.events[1]), TraceEventToJson(t.result.events[1]));

  auto inv = store_->LoadInvocations("s1");
  ASSERT_TRUE(inv.ok());
  ASSERT_EQ(inv->size(), 4u);
  const StoredInvocation& executed = (*inv)[0];
  EXPECT_EQ(executed.status, "executed");
  EXPECT_EQ(executed.success, true);
  EXPECT_EQ(executed.next_action, "clarification_needed");
  EXPECT_EQ(executed.result, EnvelopeToJson(env));
  EXPECT_EQ(executed.latency_ms, 12);
  EXPECT_EQ(executed.args, Json({{"name", "Smith"}}));
  EXPECT_EQ((*inv)[1].status, "skipped");
  EXPECT_EQ((*inv)[1].reason, "chain_stopped");
  EXPECT_FALSE((*inv)[1].success.has_value());
  EXPECT_TRUE((*inv)[1].result.is_null());
  EXPECT_EQ((*inv)[2].status, "rejected");
  EXPECT_EQ((*inv)[2].reason, "unknown_tool");
  EXPECT_EQ((*inv)[3].status, "deferred");
  EXPECT_TRUE((*inv)[3].deferred);
  EXPECT_FALSE((*inv)[0].deferred);

  EXPECT_EQ(Text("SELECT status || '|' || question || '|' || tool FROM clarifications WHERE id = 'cl_1'"),
            "pending|Which Smith?|find_customer");
  EXPECT_EQ(Int("SELECT COUNT(*) FROM clarification_options WHERE clarification_id = 'cl_1'"), 2);
  EXPECT_EQ(Text("SELECT option_id || confidence || metadata FROM clarification_options WHERE position = 0"),
            R"(c_10.75{"tier":"gold"})");
  EXPECT_EQ(Int("SELECT (confidence IS NULL) + (metadata IS NULL) FROM clarification_options WHERE position = 1"), 2);
}

TEST_F(SqliteStoreTest, MessagesReadBackInTurnOrder) {
  ASSERT_TRUE(store_->CommitTurn(Turn(1, "t1")).ok());
  ASSERT_TRUE(store_->CommitTurn(Turn(2, "t2")).ok());
  EXPECT_EQ(Int("SELECT json_array_length(messages) FROM turns WHERE id = 't1'"), 2);
  auto msgs = store_->LoadMessages("s1");
  ASSERT_TRUE(msgs.ok());
  ASSERT_EQ(msgs->size(), 4u);
  EXPECT_EQ((*msgs)[0].text, "hello 1");
  EXPECT_EQ((*msgs)[2].text, "hello 2");
  EXPECT_EQ((*msgs)[2].speaker, "alice");
  auto turns = store_->LoadTurns("s1");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 2u);
  EXPECT_EQ((*turns)[1].turn_number, 2);
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 2);
}

TEST_F(SqliteStoreTest, AnsweringAClarificationMarksItAnswered) {
  TurnRecord ask = Turn(1, "t1");
  ask.result.clarification = Clarify("cl_1");
  ASSERT_TRUE(store_->CommitTurn(ask).ok());
  TurnRecord answer = Turn(2, "t2");
  answer.answered_clarification_id = "cl_1";
  answer.chosen_option_id = "c_2";
  ASSERT_TRUE(store_->CommitTurn(answer).ok());
  EXPECT_EQ(Text("SELECT status || ':' || chosen_option FROM clarifications WHERE id = 'cl_1'"), "answered:c_2");
}

TEST_F(SqliteStoreTest, NewClarificationSupersedesThePendingOne) {
  TurnRecord first = Turn(1, "t1");
  first.result.clarification = Clarify("cl_1");
  ASSERT_TRUE(store_->CommitTurn(first).ok());
  TurnRecord second = Turn(2, "t2");
  second.result.clarification = Clarify("cl_2");
  ASSERT_TRUE(store_->CommitTurn(second).ok());
  EXPECT_EQ(Text("SELECT group_concat(id || '=' || status, ',') FROM (SELECT * FROM clarifications ORDER BY id)"),
            "cl_1=superseded,cl_2=pending");
}

TEST_F(SqliteStoreTest, AnsweringANonPendingClarificationFailsAndWritesNothing) {
  TurnRecord ask = Turn(1, "t1");
  ask.result.clarification = Clarify("cl_1");
  ASSERT_TRUE(store_->CommitTurn(ask).ok());
  TurnRecord answer = Turn(2, "t2");
  answer.answered_clarification_id = "cl_1";
  answer.chosen_option_id = "c_1";
  ASSERT_TRUE(store_->CommitTurn(answer).ok());
  const std::string before = Counts();

  // Messages, invocations and the turn row are written before the answer is checked,
  // so nothing remaining proves the rollback.
  TurnRecord again = Turn(3, "t3");
  again.result.tools = {{"c", "x", Json::object(), ToolOutcome::Status::kSkipped, "truncated", "", {}, 0, 1, 0}};
  again.result.events = {{EventType::kTurnStarted, 3, 1, Json::object()}};
  again.answered_clarification_id = "cl_1";
  auto result = store_->CommitTurn(again);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.message().find("cl_1"), std::string::npos);
  EXPECT_EQ(Counts(), before);
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 2);
  EXPECT_EQ(store_->LoadMessages("s1")->size(), 4u);
  EXPECT_EQ(Text("SELECT chosen_option FROM clarifications WHERE id = 'cl_1'"), "c_1");
}

TEST_F(SqliteStoreTest, DuplicateTurnIdIsAlreadyExistsAndWritesNothing) {
  ASSERT_TRUE(store_->CommitTurn(Turn(1, "t1")).ok());
  const std::string before = Counts();
  auto result = store_->CommitTurn(Turn(2, "t1"));
  EXPECT_EQ(result.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Counts(), before);
}

TEST_F(SqliteStoreTest, FailureMidCommitLeavesNoPartialRows) {
  TurnRecord first = Turn(1, "t1");
  first.result.clarification = Clarify("cl_1");
  ASSERT_TRUE(store_->CommitTurn(first).ok());
  const std::string before = Counts();
  // The clarification insert comes after the turn, messages and invocations; its
  // duplicate id makes SQLite itself fail half-way through the transaction.
  TurnRecord second = Turn(2, "t2");
  second.result.tools = {{"c", "x", Json::object(), ToolOutcome::Status::kSkipped, "truncated", "", {}, 0, 1, 0}};
  second.result.clarification = Clarify("cl_1");
  auto result = store_->CommitTurn(second);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Counts(), before);
  EXPECT_EQ(Text("SELECT status FROM clarifications WHERE id = 'cl_1'"), "pending");  // not superseded
}

TEST_F(SqliteStoreTest, FileDatabaseSurvivesReopenInWalMode) {
  ASSERT_TRUE(store_->CommitTurn(Turn(1, "t1")).ok());
  Reopen();
  EXPECT_EQ(store_->LoadSession("s1")->turn_count, 1);
  EXPECT_EQ(store_->LoadMessages("s1")->size(), 2u);
  EXPECT_EQ(Text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(Int("PRAGMA user_version"), store::LatestSchemaVersion());
}

TEST_F(SqliteStoreTest, NewDatabaseHasSmallPagesAndAnOldOneKeepsItsOwn) {
  EXPECT_EQ(Int("PRAGMA page_size"), 1024);
  store_.reset();
  const std::string old_path = path_ + ".old";
  testing::RemoveDatabaseFiles(old_path);
  {
    SQLite::Database db(old_path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE made_before (x)");
  }
  auto old = SqliteStore::Open(old_path);
  ASSERT_TRUE(old.ok()) << old.status().message();
  ASSERT_TRUE((*old)->CreateSession(Session("s_old")).ok());
  EXPECT_EQ((*old)->LoadSession("s_old")->tenant, "acme");
  old->reset();
  {
    SQLite::Database db(old_path, SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("PRAGMA page_size").getInt(), 4096);
  }
  testing::RemoveDatabaseFiles(old_path);
}

// SQLite's count of its heap, on before SQLite starts (before main): the store turns
// the count off when it is the first to start SQLite (SqliteStore::Open).
const int kSqliteCountsMemory = [] {
  const int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);
  return rc == SQLITE_OK ? sqlite3_initialize() : rc;
}();

// The page cache stays within its bound however far the file grows: about 4 MB of
// turns written, and SQLite's whole heap in this process (this store's connection;
// the readers above are closed) stays well under the 2 MiB its default cache alone
// would reach.
TEST_F(SqliteStoreTest, PageCacheStaysWithinItsBoundAsTheFileGrows) {
  ASSERT_EQ(kSqliteCountsMemory, SQLITE_OK);
  ASSERT_GT(sqlite3_memory_used(), 0) << "SQLite counts no memory: this check would prove nothing";
  const std::string long_reply(4000, 'x');
  for (int n = 1; n <= 1000; ++n) {
    TurnRecord t = Turn(n, "t" + std::to_string(n));
    t.result.reply = long_reply;
    ASSERT_TRUE(store_->CommitTurn(t).ok());
  }
  EXPECT_GT(Int("PRAGMA page_count"), 4000);
  EXPECT_LT(sqlite3_memory_used(), 1700 * 1024);
}

TEST_F(SqliteStoreTest, DatabaseFromANewerReinsIsRefused) {
  store_.reset();
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version = 99");
  }
  auto opened = SqliteStore::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(opened.status().message(), "database schema version 99 is newer than this reins (" +
                                           std::to_string(store::LatestSchemaVersion()) + "); upgrade reins");
}

TEST_F(SqliteStoreTest, CorruptMessageRowIsAnInternalErrorNotACrash) {
  ASSERT_TRUE(store_->CommitTurn(Turn(1, "t1")).ok());
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("UPDATE turns SET messages = '[{\"role\": \"user\"}, 7]' WHERE id = 't1'");
  }
  auto msgs = store_->LoadMessages("s1");
  ASSERT_FALSE(msgs.ok());
  EXPECT_EQ(msgs.status().code(), StatusCode::kInternal);
  EXPECT_NE(msgs.status().message().find("message 2 of turn 1 of session 's1'"), std::string::npos)
      << msgs.status().message();
}

TEST(OpenStoreTest, MemoryUrlOpensAWorkingStore) {
  auto store = OpenStore("sqlite::memory:");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  SessionRecord s;
  s.id = "m1";
  ASSERT_TRUE((*store)->CreateSession(s).ok());
  EXPECT_TRUE((*store)->LoadSession("m1").ok());
  // Each in-memory store is private.
  EXPECT_EQ(OpenStore("sqlite::memory:").value()->LoadSession("m1").status().code(), StatusCode::kNotFound);
}

TEST(OpenStoreTest, PathUrlOpensAFile) {
  const std::string path = "/tmp/reins_open_store_" + std::to_string(::getpid()) + ".db";
  {
    auto store = OpenStore("sqlite:" + path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  testing::RemoveDatabaseFiles(path);
}

TEST(OpenStoreTest, ASynchronousOptionChoosesHowCommitsReachTheDisk) {
  const std::string path = "/tmp/reins_open_store_sync_" + std::to_string(::getpid()) + ".db";
  for (const char* option : {"?synchronous=full", "?synchronous=normal"}) {
    auto store = OpenStore("sqlite:" + path + option);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_TRUE(std::filesystem::exists(path)) << "the option is not part of the file name";
  }
  auto wrong = OpenStore("sqlite:" + path + "?synchronous=off");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("use ?synchronous=full or ?synchronous=normal"), std::string::npos);
  testing::RemoveDatabaseFiles(path);
}

TEST(OpenStoreTest, UnsupportedUrlsAreRefusedWithAReason) {
  for (const char* url : {"mysql://x", "sqlite:", "", "memory"}) {
    auto r = OpenStore(url);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << url;
    EXPECT_NE(r.status().message().find("use sqlite:PATH, sqlite::memory: or postgres://"), std::string::npos) << url;
  }
  EXPECT_EQ(OpenStore("sqlite:/nonexistent_dir_reins/x.db").status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace reins

namespace reins {
namespace {

TEST_F(SqliteStoreTest, AWithdrawnClarificationIsNoLongerPending) {
  TurnRecord first = Turn(1, "t1");
  first.result.clarification = Clarify("cl_1");
  ASSERT_TRUE(store_->CommitTurn(first).ok());
  TurnRecord second = Turn(2, "t2");
  second.withdrawn_clarification_id = "cl_1";  // the owner said stop, or asked something else
  ASSERT_TRUE(store_->CommitTurn(second).ok());
  EXPECT_EQ(Text("SELECT status FROM clarifications WHERE id = 'cl_1'"), "superseded");
}

}  // namespace
}  // namespace reins

namespace reins {
namespace {

TEST_F(SqliteStoreTest, TurnsAndTheirCallsReadBackPageByPage) {
  for (int n = 1; n <= 7; ++n) {
    TurnRecord t = Turn(n, "t" + std::to_string(n));
    ToolOutcome call;
    call.call_id = "c" + std::to_string(n);
    call.name = "lookup";
    call.status = ToolOutcome::Status::kSkipped;
    t.result.tools.push_back(call);
    ASSERT_TRUE(store_->CommitTurn(t).ok());
  }
  auto page = store_->LoadTurns("s1", TurnRange{2, 3});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ((*page)[0].turn_number, 3);
  EXPECT_EQ((*page)[2].turn_number, 5);
  auto calls = store_->LoadInvocations("s1", TurnRange{2, 3});
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 3u);
  EXPECT_EQ((*calls)[0].turn_id, "t3");
  EXPECT_EQ((*calls)[2].turn_id, "t5");
  EXPECT_EQ(store_->LoadTurns("s1", TurnRange{6, 100})->size(), 1u);
  EXPECT_EQ(store_->LoadTurns("s1", TurnRange{7, 100})->size(), 0u);
  EXPECT_EQ(store_->LoadInvocations("s1", TurnRange{5, std::numeric_limits<int>::max()})->size(), 2u);
  EXPECT_EQ(store_->LoadTurns("nope", TurnRange{0, 1}).status().code(), StatusCode::kNotFound);
}

TEST_F(SqliteStoreTest, AnIdempotencyKeyFindsItsTurnAndIsUniquePerSession) {
  TurnRecord keyed = Turn(1, "t1");
  keyed.input["idempotency_key"] = "k-1";
  ASSERT_TRUE(store_->CommitTurn(keyed).ok());
  ASSERT_TRUE(store_->CommitTurn(Turn(2, "t2")).ok());
  auto found = store_->FindTurnByKey("s1", "k-1");
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ((*found)->turn_id, "t1");
  EXPECT_EQ((*found)->input["say"], "hello 1");
  EXPECT_FALSE(store_->FindTurnByKey("s1", "k-2").value());
  TurnRecord again = Turn(3, "t3");
  again.input["idempotency_key"] = "k-1";
  EXPECT_EQ(store_->CommitTurn(again).code(), StatusCode::kAlreadyExists) << "the index holds it";
  ASSERT_TRUE(store_->CreateSession(Session("s2")).ok());
  again.session_id = "s2";
  again.result.turn_number = 1;
  EXPECT_TRUE(store_->CommitTurn(again).ok()) << "another session may use the same key";
}

// The store writes every turn's texts into the same strings (FillTurnText): a large keyed
// turn leaves nothing of itself in the columns of a small one after it.
TEST_F(SqliteStoreTest, EachTurnsRowHoldsOnlyItsOwnTexts) {
  TurnRecord large = Turn(1, "t1");
  large.input["idempotency_key"] = "k-1";
  for (int i = 0; i < 40; ++i) large.result.events.push_back({EventType::kModelCall, 1, 5000 + i, {{"i", i}}});
  large.new_messages.push_back(Message::Assistant(std::string(3000, 'x')));
  ASSERT_TRUE(store_->CommitTurn(large).ok());
  TurnRecord small = Turn(2, "t2");
  small.result.events.push_back({EventType::kTurnCompleted, 2, 6000, {{"status", "completed"}}});
  ASSERT_TRUE(store_->CommitTurn(small).ok());

  for (const TurnRecord* t : {&large, &small}) {
    const std::string where = " FROM turns WHERE id = '" + t->result.turn_id + "'";
    const store::TurnText expected = store::TurnTextOf(*t);
    EXPECT_EQ(Text("SELECT events" + where), expected.events);
    EXPECT_EQ(Text("SELECT messages" + where), expected.messages);
    EXPECT_EQ(Text("SELECT input" + where), expected.input);
    EXPECT_EQ(Text("SELECT result" + where), expected.result);
    EXPECT_EQ(Text("SELECT COALESCE(idempotency_key, 'none')" + where), expected.idempotency_key.value_or("none"));
  }
  EXPECT_EQ(Text("SELECT events FROM turns WHERE id = 't2'"),
            R"([{"type":"turn.completed","turn":2,"at_ms":6000,"data":{"status":"completed"}}])");
}

TEST_F(SqliteStoreTest, SessionsAreCountedPerTenant) {
  SessionRecord other = Session("s2");
  other.tenant = "globex";
  ASSERT_TRUE(store_->CreateSession(other).ok());
  ASSERT_TRUE(store_->CreateSession(Session("s3")).ok());
  EXPECT_EQ(store_->CountSessions("acme").value(), 2);
  EXPECT_EQ(store_->CountSessions("globex").value(), 1);
  EXPECT_EQ(store_->CountSessions("nobody").value(), 0);
  EXPECT_EQ(store_->CountSessions(std::nullopt).value(), 3);
}

TEST_F(SqliteStoreTest, TheKeyMigrationCarriesKeysOfOlderTurnsOver) {
  TurnRecord keyed = Turn(1, "t1");
  keyed.input["idempotency_key"] = "old-key";
  ASSERT_TRUE(store_->CommitTurn(keyed).ok());
  store_.reset();
  {
    // Back to version 5, as a database written before the key column existed.
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("DROP TABLE conversations; DROP INDEX turns_by_idempotency_key; DROP INDEX sessions_by_tenant;"
            "ALTER TABLE turns DROP COLUMN idempotency_key; ALTER TABLE outbox DROP COLUMN step_id;"
            "DROP TABLE writes; PRAGMA user_version = 5");
  }
  Reopen();
  auto found = store_->FindTurnByKey("s1", "old-key");
  ASSERT_TRUE(found.ok() && *found) << found.status().message();
  EXPECT_EQ((*found)->turn_id, "t1");
}

TEST_F(SqliteStoreTest, TheV8MigrationKeepsInvocationsInOrderWithoutTheirSequence) {
  ToolOutcome call;
  call.call_id = "c1";
  call.name = "lookup";
  call.args = {{"city", "Paris"}};
  TurnRecord first = Turn(1, "t1");
  first.result.tools = {call, call};
  ASSERT_TRUE(store_->CommitTurn(first).ok());
  store_.reset();
  {
    // Back to version 7: the table as it was, numbered by AUTOINCREMENT, with its index by turn.
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec(
        "DROP TABLE conversations; CREATE TABLE v7 AS SELECT * FROM tool_invocations; DROP TABLE tool_invocations;"
        "CREATE TABLE tool_invocations (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
        " turn_id TEXT NOT NULL, response_index INTEGER NOT NULL, position INTEGER NOT NULL, call_id TEXT NOT NULL,"
        " name TEXT NOT NULL, args TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL, success INTEGER,"
        " next_action TEXT, result TEXT, latency_ms INTEGER NOT NULL, deferred INTEGER NOT NULL, message TEXT NOT NULL,"
        " idempotency_key TEXT);"
        "INSERT INTO tool_invocations SELECT * FROM v7; DROP TABLE v7;"
        "UPDATE tool_invocations SET id = id + 40;"  // ids with gaps, as a sequence leaves them
        "CREATE INDEX tool_invocations_by_turn ON tool_invocations(turn_id);"
        "CREATE INDEX tool_invocations_by_session ON tool_invocations(session_id);"
        "DROP TABLE writes; PRAGMA user_version = 7");
    ASSERT_EQ(db.execAndGet("SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'tool_invocations'").getInt(), 1);
  }
  Reopen();
  EXPECT_EQ(Int("PRAGMA user_version"), store::LatestSchemaVersion());
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'tool_invocations'"), 0);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sqlite_master WHERE name = 'tool_invocations_by_turn'"), 0);
  EXPECT_EQ(Text("SELECT group_concat(id) FROM tool_invocations"), "41,42");
  TurnRecord second = Turn(2, "t2");
  second.result.tools = {call};
  ASSERT_TRUE(store_->CommitTurn(second).ok());
  EXPECT_EQ(Int("SELECT MAX(id) FROM tool_invocations WHERE turn_id = 't2'"), 43) << "a new call numbers after the old";
  auto calls = store_->LoadInvocations("s1");
  ASSERT_TRUE(calls.ok()) << calls.status().ToString();
  ASSERT_EQ(calls->size(), 3u);
  EXPECT_EQ((*calls)[2].turn_id, "t2");
}

TEST_F(SqliteStoreTest, TheV12MigrationRebuildsTheCheckedTablesAndKeepsEveryRow) {
  TurnRecord first = Turn(1, "t1");
  first.result.tools = {{"c1", "email", {{"to", "x"}}, ToolOutcome::Status::kDeferred, "", "", {}, 0, 1, 0},
                        {"c2", "drop_db", Json::object(), ToolOutcome::Status::kRejected, "unknown_tool", "", {}, 0, 1, 1}};
  first.result.clarification = Clarify("cl_1");
  first.result.approval = PendingApproval{"ap_1", "refund", {{"amount", 5}}, "refund Smith", {}};
  ASSERT_TRUE(store_->CommitTurn(first).ok());
  const std::string before = Counts() + " approvals=" + std::to_string(Int("SELECT COUNT(*) FROM approvals"));
  store_.reset();
  {
    // Back to version 11, with one table as that version had it (the other three are
    // rebuilt the same way whatever their checks say).
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec(
        "CREATE TABLE v11 AS SELECT * FROM tool_invocations; DROP TABLE tool_invocations;"
        "CREATE TABLE tool_invocations (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id),"
        " turn_id TEXT NOT NULL REFERENCES turns(id), response_index INTEGER NOT NULL, position INTEGER NOT NULL,"
        " call_id TEXT NOT NULL, name TEXT NOT NULL, args TEXT NOT NULL,"
        " status TEXT NOT NULL CHECK (status IN ('executed', 'deferred', 'rejected', 'skipped')),"
        " reason TEXT NOT NULL, success INTEGER, next_action TEXT, result TEXT, latency_ms INTEGER NOT NULL,"
        " deferred INTEGER NOT NULL CHECK (deferred IN (0, 1)), message TEXT NOT NULL, idempotency_key TEXT);"
        "INSERT INTO tool_invocations SELECT * FROM v11; DROP TABLE v11;"
        "CREATE INDEX tool_invocations_by_session ON tool_invocations(session_id);"
        "DROP TABLE writes; PRAGMA user_version = 11");
  }
  Reopen();
  EXPECT_EQ(Int("PRAGMA user_version"), store::LatestSchemaVersion());
  EXPECT_EQ(Counts() + " approvals=" + std::to_string(Int("SELECT COUNT(*) FROM approvals")), before);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sqlite_master WHERE sql LIKE '%status IN (%'"), 0);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%_v12'"), 0);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'tool_invocations_by_key'"), 1);
  EXPECT_EQ(Text("SELECT group_concat(option_id) FROM clarification_options JOIN clarifications"
                 " ON clarifications.id = clarification_id"),
            "c_1,c_2");
  EXPECT_EQ(Text("SELECT status FROM approvals WHERE id = 'ap_1'"), "pending");
  EXPECT_EQ(Text("SELECT status FROM outbox WHERE turn_id = 't1'"), "pending");

  // The checks still hold, and the store's foreign keys are on again.
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    for (const char* table : {"tool_invocations", "outbox", "approvals", "clarifications"}) {
      EXPECT_THROW(db.exec(std::string("UPDATE ") + table + " SET status = 'lost'"), SQLite::Exception) << table;
    }
  }
  TurnRecord no_session = Turn(2, "t2");
  no_session.session_id = "nobody";
  EXPECT_EQ(store_->CommitTurn(no_session).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->CommitTurn(Turn(2, "t2")).ok());
}

}  // namespace
}  // namespace reins

// PostgresStore: the Store of reins/store.h on PostgreSQL, for several replicas
// sharing one database (docs/deployment.md).
//
// Every call borrows a connection from a bounded pool for the length of the call and
// runs its statements there; everything one call writes is one transaction. A
// connection the server dropped (a restart) is replaced: a call that fails on a
// connection that died while idle is tried once more on a fresh one. Every statement
// is bounded by statement_timeout. Safe to call from any number of threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "reins/store.h"

namespace reins {
namespace store::pg {
class Connection;
class Pool;
}  // namespace store::pg

class PostgresStore final : public Store {
 public:
  // Connects to `url` (postgres://user@host:port/db, with libpq's own query options
  // and reins' pool_size and statement_timeout_ms) and applies missing migrations under
  // an advisory lock. Unavailable when the server cannot be reached, FailedPrecondition
  // when its schema is newer than this build.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url);
  ~PostgresStore() override;

  Status CreateSession(const SessionRecord& session) override;
  Result<SessionRecord> LoadSession(const std::string& session_id) override;
  Result<std::string> LoadTenant(const std::string& session_id) override;
  Result<std::vector<SessionRecord>> ListSessions() override;
  Result<std::vector<RecentSession>> RecentSessions(const std::optional<std::string>& tenant, int limit) override;
  Result<int64_t> CountSessions(std::optional<std::string> tenant) override;
  Result<std::vector<Message>> LoadMessages(const std::string& session_id, TurnRange range = {}) override;
  Status CommitTurn(const TurnRecord& turn) override;  // postgres_commit.cc
  // A batch in one pipeline, a transaction a turn (pg_pipeline.h): one round trip.
  std::vector<Status> CommitTurns(const std::vector<const TurnRecord*>& turns) override;
  Result<std::vector<StoredTurn>> LoadTurns(const std::string& session_id, TurnRange range = {}) override;
  Result<std::vector<StoredInvocation>> LoadInvocations(const std::string& session_id, TurnRange range = {}) override;
  Result<std::optional<StoredTurn>> FindTurnByKey(const std::string& session_id,
                                                  const std::string& idempotency_key) override;
  // The outbox, notices and leases: postgres_commit.cc
  Result<bool> ClaimOutbox(const std::string& key, int64_t now_ms) override;
  Status StageOutbox(const std::vector<OutboxEntry>& entries) override;
  Status RecordDeferredOutcome(const DeferredOutcome& outcome) override;
  Result<std::vector<OutboxEntry>> UnfinishedOutbox() override;
  Result<std::vector<OutboxEntry>> LoadOutbox(const std::string& session_id) override;
  // The write-ahead record of immediate writes: postgres_writes.cc
  Result<std::optional<WriteRecord>> BeginWrite(const WriteRecord& intent) override;
  Status RetryWrite(const WriteRecord& retry) override;
  Status FinishWrite(const WriteRecord& outcome) override;
  Result<std::vector<WriteRecord>> LoadWrites(const std::string& session_id) override;
  Result<std::vector<Notice>> PendingNotices(const std::string& session_id) override;
  Result<Lease> LoadLease(const std::string& session_id) override;
  Result<int64_t> SetLease(const std::string& session_id, const Lease& lease, int64_t expected_version) override;
  Status LinkConversation(const std::string& tenant, const std::string& digest, const std::string& session_id,
                          int64_t at_ms) override;
  Result<std::vector<std::string>> FindConversation(const std::string& tenant, const std::string& digest,
                                                    int limit) override;
  // Replicas: postgres_commit.cc
  bool shared() const override { return true; }
  int concurrent_calls() const override;
  Result<std::optional<SessionClaim>> ClaimSession(const std::string& session_id, const std::string& owner,
                                                   int64_t ttl_ms) override;
  std::vector<Result<std::optional<SessionClaim>>> ClaimSessions(const std::vector<const ClaimRequest*>& asks) override;
  Status ReleaseSession(const std::string& session_id, int64_t token) override;
  // MCP question marks and replica mail: postgres_mail.cc
  Result<QuestionMark> MarkQuestion(const std::string& session_id, const QuestionMark& mark) override;
  Status UnmarkQuestion(const std::string& session_id, const std::string& replica) override;
  Result<QuestionMark> QuestionHolder(const std::string& session_id) override;
  Result<int64_t> SendMail(const std::string& to, const Json& body, int64_t now_ms) override;
  Result<std::vector<ReplicaMail>> TakeMail(const std::string& to) override;
  Status ReplyMail(int64_t id, const Json& reply) override;
  Result<MailState> CollectMail(int64_t id) override;
  Result<bool> WithdrawMail(int64_t id) override;
  Status DiscardMail(int64_t id) override;
  Status SweepMail(int64_t before_ms) override;
  // LISTEN/NOTIFY on a connection of its own (pg_event_relay.h).
  Result<std::unique_ptr<EventRelay>> RelayEvents(PeerEventHandler on_peer_event) override;

 private:
  explicit PostgresStore(std::unique_ptr<store::pg::Pool> pool);
  // Runs `body` on a pooled connection, twice when the first connection had died idle
  // (the body must not keep state between its runs).
  Status Call(const std::function<Status(store::pg::Connection&)>& body);

  std::unique_ptr<store::pg::Pool> pool_;
};

}  // namespace reins

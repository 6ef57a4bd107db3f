// Store: durable sessions, turns, conversation history, tool invocations,
// clarifications and trace events. SQLite (one process) and PostgreSQL (several
// replicas) implement it (src/store/, docs/deployment.md).
//
// Atomicity: CommitTurn writes everything a turn produced in one transaction, so a
// crash or an error never leaves half a turn behind. Calls are synchronous;
// implementations are safe to call from several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reins/enum_names.h"
#include "reins/envelope.h"
#include "reins/json.h"
#include "reins/message.h"
#include "reins/status.h"
#include "reins/trace.h"
#include "reins/turn.h"

namespace reins {

struct SessionRecord {
  std::string id;
  std::string tenant;
  int64_t created_at_ms = 0;
  Json metadata = Json::object();
  Json state = Json::object();  // runtime session state: entity ledger, pending clarification...
  int turn_count = 0;
};

// A deferred call waiting in (or done with) the outbox. Written in the same
// transaction as the turn that proposed it, before its reply is delivered (I12).
struct OutboxEntry {
  std::string key;  // idempotency key, passed to the tool backend
  std::string session_id;
  std::string turn_id;
  std::string tool;
  Json args;
  DeferredMode mode = DeferredMode::kAwait;
  std::string status;  // staged | pending | running | done
  int attempts = 0;
  Json result;  // envelope of the last attempt (null until one finished)
  std::string step_id;  // plan mode: the step it was queued for ("" otherwise)
  int64_t updated_at_ms = 0;  // when it was queued, claimed or finished
};

struct Notice {
  int64_t id = 0;
  std::string session_id;
  std::string turn_id;  // the turn whose deferred call failed
  std::string text;
};

// The outcome of one deferred call: recorded on the outbox row, the tool invocation and
// (plan mode) the step that queued it, with the trace events it produced, in one
// transaction.
struct DeferredOutcome {
  std::string key;
  ResultEnvelope result;
  int64_t latency_ms = 0;
  std::vector<TraceEvent> events;  // appended to the turn's trace
  std::string notice;              // non-empty: a notice for the next reply (background failures)
  std::string reply;               // non-empty: the turn's reply, now with its failure note (await)
  int64_t at_ms = 0;
};

// An immediate write's write-ahead record (docs/deployment.md, "Every write once"): its
// intent is committed before the call runs, its outcome once the call returns. A retry of
// the turn that proposes the same call finds the record under the same key and uses its
// outcome instead of running the call again; a record still `running` when it is found
// is a try that never returned (its process died): the write is uncertain.
struct WriteRecord {
  enum class State { kRunning, kSucceeded, kFailed, kUncertain };
  std::string session_id;
  std::string key;      // stable across the tries of its turn (pipeline/write_ledger.h)
  std::string turn_id;  // the try that recorded it last
  std::string tool;
  Json args;
  State state = State::kRunning;
  Json result;  // the result envelope, once it returned (succeeded, failed)
  int attempts = 1;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
};
inline constexpr EnumNames<WriteRecord::State, 4> kWriteStates{{{{WriteRecord::State::kRunning, "running"},
                                                                 {WriteRecord::State::kSucceeded, "succeeded"},
                                                                 {WriteRecord::State::kFailed, "failed"},
                                                                 {WriteRecord::State::kUncertain, "uncertain"}}}};

// Everything one turn writes.
struct TurnRecord {
  std::string session_id;
  // Set when this turn begins its session (Runtime::StartSession): the session is
  // written in the turn's own transaction, with the turn's `session_state` and number
  // in place of the record's state and count, so that both are stored or neither is.
  // AlreadyExists when a session has that id.
  std::optional<SessionRecord> new_session;
  std::string speaker;
  Json input = Json::object();      // the TurnInput as JSON
  TurnResult result;                // status, reply, tools (invocations), events, clarification
  std::vector<Message> new_messages;  // appended to the session's history, in order
  Json session_state;               // the session state after the turn
  std::string answered_clarification_id;  // set when this turn answered one ...
  std::string chosen_option_id;           // ... with this option
  std::string withdrawn_clarification_id; // a pending one this turn superseded or cancelled
  // Approvals: opened by this turn (result.approval), decided, cancelled or found lapsed.
  std::string decided_approval_id;
  std::string approval_decision;  // granted | denied
  Json approved_args;             // granted with these edited arguments (null: as proposed)
  std::string approval_message;   // what the person said with their decision
  std::string cancelled_approval_id;
  std::string lapsed_approval_id;
  std::vector<int64_t> delivered_notices;  // notices this turn's reply carried
  // A lease opened or released by this turn, written only if the stored lease still
  // has `lease_expected_version` (compare-and-set); otherwise nothing is written.
  std::optional<Lease> lease_change;
  int64_t lease_expected_version = 0;
  int64_t created_at_ms = 0;
  // Deferred calls (result.tools with status deferred) enter the outbox in this mode.
  DeferredMode deferred_mode = DeferredMode::kAwait;
  // Its reply streamed: the deferred calls were staged (Store::StageOutbox) before the
  // first delta left; the commit makes them pending and removes those it withdrew.
  bool outbox_staged = false;
  // Shared stores: the claim the turn ran under; the commit is refused (Aborted) when
  // the session's claim is no longer this one. 0: no claim (one-process stores).
  int64_t claim_token = 0;
  // Shared stores: the commit also ends that claim, as ReleaseSession would, because
  // nothing of the turn runs after it (it queued no deferred call). The session's next
  // turn, on any replica, then waits for no second statement.
  bool release_claim = false;
};

// A session in the trace viewer's list, with how its newest turn ended.
struct RecentSession {
  SessionRecord session;
  std::string last_status;  // the newest turn's status; "" before the first turn
  // Who opened the session and with what (its first turn's speaker and input), for a
  // list a person scans; "" and null before the first turn.
  std::string first_speaker;
  Json first_input;
};

// A turn as read back from the store.
struct StoredTurn {
  std::string turn_id;
  int turn_number = 0;
  std::string speaker;
  std::string status;
  std::string reply;
  int64_t created_at_ms = 0;
  Json input;
  Json result;  // TurnResultToJson of the turn without its tools (LoadInvocations has them)
  std::vector<TraceEvent> events;
};

// A replica's claim on a session for one turn (shared stores): `token` fences the
// turn's commit, `turn_count` is the session's version when the claim was taken, and
// `notices` says whether it had an undelivered notice then (read with the claim, so
// that a turn with none makes no second trip to look).
struct SessionClaim {
  int64_t token = 0;
  int turn_count = 0;
  bool notices = true;
};

// One claim asked of Store::ClaimSessions.
struct ClaimRequest {
  std::string session_id;
  std::string owner;  // the replica
  int64_t ttl_ms = 0;
};

// Mail between replicas of a shared store: a message to one replica, and its reply.
// The MCP relay (host/mcp_relay.h) sends a replica the answer to a question that an
// MCP call open there asked, and gets the call's result back.
struct ReplicaMail {
  int64_t id = 0;
  Json body;
};
// Which replica holds a session's MCP question, and when it asked: the time tells a
// question from the next one the same replica asks.
struct QuestionMark {
  std::string replica;
  int64_t asked_at_ms = 0;
};
struct MailState {
  enum class Stage { kUnread, kTaken, kReplied, kGone };
  Stage stage = Stage::kGone;
  Json reply;  // kReplied
};

struct StoredInvocation {
  std::string turn_id;
  int response_index = 0;
  int position = 0;
  std::string name;
  Json args;
  std::string status;  // executed | deferred | rejected | skipped
  std::string reason;
  std::optional<bool> success;
  std::string next_action;
  Json result;  // envelope JSON, null when not executed
  int64_t latency_ms = 0;
  bool deferred = false;
};

// A window of a session's turns by number: those numbered after `after`, at most
// `limit` of them. Readers of long sessions page through them instead of loading all.
struct TurnRange {
  int after = 0;
  int limit = std::numeric_limits<int>::max();
};

// Carries session events between the processes that share a store, so that a session's
// event stream on one replica sees what another replica produced.
class EventRelay {
 public:
  virtual ~EventRelay() = default;
  // Sends one event to the other processes. Never blocks: the relay's thread sends it.
  virtual void Publish(const std::string& session_id, const TraceEvent& event) = 0;
};
using PeerEventHandler = std::function<void(const std::string& session_id, const TraceEvent& event)>;

class Store {
 public:
  virtual ~Store() = default;

  virtual Status CreateSession(const SessionRecord& session) = 0;
  // NotFound when there is no such session.
  virtual Result<SessionRecord> LoadSession(const std::string& session_id) = 0;
  // The tenant a session belongs to (checked on every request that names a session, so
  // a store may answer it without reading the whole session).
  virtual Result<std::string> LoadTenant(const std::string& session_id) {
    REINS_ASSIGN_OR_RETURN(SessionRecord session, LoadSession(session_id));
    return std::move(session.tenant);
  }
  virtual Result<std::vector<SessionRecord>> ListSessions() = 0;
  // The newest `limit` sessions (by creation, then id), newest first, of one tenant or
  // of all with nullopt, each with its newest turn's status: what the trace viewer
  // lists. The stores answer it in one query and decode only the rows returned (a scan
  // with a top-N sort: creation order has no index, on purpose, so that creating a
  // session writes one b-tree entry fewer; the status through the turns' (session,
  // number) key); this default reads every session and each listed one's last turn.
  virtual Result<std::vector<RecentSession>> RecentSessions(const std::optional<std::string>& tenant, int limit) {
    Result<std::vector<SessionRecord>> all = ListSessions();  // oldest first
    if (!all.ok()) return all.status();
    std::vector<RecentSession> out;
    for (auto it = all->rbegin(); it != all->rend() && static_cast<int>(out.size()) < limit; ++it) {
      if (tenant && it->tenant != *tenant) continue;
      RecentSession recent;
      if (it->turn_count > 0) {
        Result<std::vector<StoredTurn>> last = LoadTurns(it->id, TurnRange{it->turn_count - 1, 1});
        if (!last.ok()) return last.status();
        if (!last->empty()) recent.last_status = last->front().status;
        Result<std::vector<StoredTurn>> first = LoadTurns(it->id, TurnRange{0, 1});
        if (!first.ok()) return first.status();
        if (!first->empty()) {
          recent.first_speaker = first->front().speaker;
          recent.first_input = first->front().input;
        }
      }
      recent.session = std::move(*it);
      out.push_back(std::move(recent));
    }
    return out;
  }
  // Sessions in the store: of one tenant, or of all tenants when `tenant` is nullopt.
  virtual Result<int64_t> CountSessions(std::optional<std::string> tenant) = 0;
  // The session's conversation history in order (of the turns in `range`).
  virtual Result<std::vector<Message>> LoadMessages(const std::string& session_id, TurnRange range = {}) = 0;
  // Atomically: the turn row, its messages, tool invocations, clarification opened or
  // answered, trace events, and the session's new state and turn count.
  virtual Status CommitTurn(const TurnRecord& turn) = 0;
  // Several turns in one transaction (group commit), each still all or nothing on its
  // own: a turn that fails leaves the others committed. One status per turn, in order.
  // The default commits them one by one.
  virtual std::vector<Status> CommitTurns(const std::vector<const TurnRecord*>& turns) {
    std::vector<Status> out;
    out.reserve(turns.size());
    for (const TurnRecord* turn : turns) out.push_back(CommitTurn(*turn));
    return out;
  }
  // Turns in order, with their tool invocations (of the same turns) in order.
  virtual Result<std::vector<StoredTurn>> LoadTurns(const std::string& session_id, TurnRange range = {}) = 0;
  virtual Result<std::vector<StoredInvocation>> LoadInvocations(const std::string& session_id,
                                                                TurnRange range = {}) = 0;
  // The turn whose input carried `idempotency_key` (unique per session), if any.
  virtual Result<std::optional<StoredTurn>> FindTurnByKey(const std::string& session_id,
                                                          const std::string& idempotency_key) = 0;

  // Conversations of the OpenAI-compatible endpoint (docs/openai-endpoint.md): a
  // stateless client resends its whole history, which names its session only by a
  // digest of that history. Link records that `digest`, within `tenant`, leads to
  // `session_id` (again: nothing changes); Find returns the sessions a digest leads to,
  // at most `limit`, oldest link first. Several sessions may share a digest (two
  // clients whose conversations began alike): the caller refuses to choose.
  virtual Status LinkConversation(const std::string& tenant, const std::string& digest, const std::string& session_id,
                                  int64_t at_ms) = 0;
  virtual Result<std::vector<std::string>> FindConversation(const std::string& tenant, const std::string& digest,
                                                            int limit) = 0;

  // The outbox (deferral, I12). Claim moves a pending (or, after a crash, running)
  // entry to running and counts the attempt; false when it is already done. A shared
  // store takes a running entry over only once it has run for longer than any deferred
  // call may (its replica died), never while another replica may be running it.
  virtual Result<bool> ClaimOutbox(const std::string& key, int64_t now_ms) = 0;
  // Marks the entry done with its outcome, once: AlreadyExists (and nothing written)
  // when its outcome is recorded already, by a replica that took it over and ran it too.
  virtual Status RecordDeferredOutcome(const DeferredOutcome& outcome) = 0;
  // A streamed reply's first byte may not leave before the writes its turn queued are
  // durable (I12), and the turn is committed only after the reply: those calls are
  // written ahead as `staged`. The turn's commit makes them pending (or removes the
  // ones it withdrew); a staged entry whose turn never committed (a crash mid-stream)
  // is an unfinished entry like any other, which recovery runs once its turn is
  // surely gone. Written again (same key), an entry is left as it is.
  virtual Status StageOutbox(const std::vector<OutboxEntry>& entries) = 0;
  // Entries not done, oldest first: what a restarted runtime must still run.
  virtual Result<std::vector<OutboxEntry>> UnfinishedOutbox() = 0;
  virtual Result<std::vector<OutboxEntry>> LoadOutbox(const std::string& session_id) = 0;
  // Notices not yet carried by a reply, oldest first.
  virtual Result<std::vector<Notice>> PendingNotices(const std::string& session_id) = 0;

  // The write-ahead record of immediate writes (WriteRecord). BeginWrite stores
  // `intent` (state running) and returns nullopt, or, when its key is recorded already,
  // stores nothing and returns that record. RetryWrite counts another try of a running
  // record under its key (attempts + 1, the try's turn id). FinishWrite records the
  // outcome (succeeded, failed, or uncertain when it is not run again) of a record still
  // running, once: AlreadyExists when it has one. A store that keeps no such record
  // answers Unimplemented, and the runtime then does not run the write.
  virtual Result<std::optional<WriteRecord>> BeginWrite(const WriteRecord& intent) {
    (void)intent;
    return Unimplemented("this store keeps no write-ahead record of immediate writes");
  }
  virtual Status RetryWrite(const WriteRecord& retry) {
    (void)retry;
    return Unimplemented("this store keeps no write-ahead record of immediate writes");
  }
  virtual Status FinishWrite(const WriteRecord& outcome) {
    (void)outcome;
    return Unimplemented("this store keeps no write-ahead record of immediate writes");
  }
  virtual Result<std::vector<WriteRecord>> LoadWrites(const std::string& session_id) {
    (void)session_id;
    return std::vector<WriteRecord>{};
  }

  // Floor leases (I6). LoadLease gives owner "" and version 0 when there never was one.
  virtual Result<Lease> LoadLease(const std::string& session_id) = 0;
  // Compare-and-set: stores `lease` (owner "" releases it) only if the stored version
  // is `expected_version`, and returns the new version; FailedPrecondition when another
  // writer changed it first. One statement, so it holds across replicas of a shared store.
  virtual Result<int64_t> SetLease(const std::string& session_id, const Lease& lease, int64_t expected_version) = 0;

  // Several processes share this store (replicas): turns of one session are ordered
  // across them by claims, and a process's cached copy of a session is checked against
  // the claim's version. One-process stores (SQLite) answer false and need neither.
  virtual bool shared() const { return false; }
  // How many calls a shared store serves at once (its connections): the number of
  // threads a runtime runs its calls on.
  virtual int concurrent_calls() const { return 1; }
  // Takes the session for one turn when no other claim is live: a new token, valid for
  // `ttl_ms` (by the store's clock) unless released; nullopt while another holds it,
  // NotFound when there is no such session. No connection or lock is held meanwhile.
  virtual Result<std::optional<SessionClaim>> ClaimSession(const std::string& session_id, const std::string& owner,
                                                           int64_t ttl_ms) {
    (void)session_id, (void)owner, (void)ttl_ms;
    return Unimplemented("this store is not shared: sessions need no claims");
  }
  // ClaimSession for each request, answered in order; a shared store takes them in one
  // statement. A session asked for twice is claimed once (the later asks get nullopt).
  virtual std::vector<Result<std::optional<SessionClaim>>> ClaimSessions(const std::vector<const ClaimRequest*>& asks) {
    std::vector<Result<std::optional<SessionClaim>>> claims;
    claims.reserve(asks.size());
    for (const ClaimRequest* ask : asks) claims.push_back(ClaimSession(ask->session_id, ask->owner, ask->ttl_ms));
    return claims;
  }
  // Lets go of the claim `token` (a no-op when it is no longer the session's).
  virtual Status ReleaseSession(const std::string& session_id, int64_t token) {
    (void)session_id, (void)token;
    return {};
  }
  // MCP questions across replicas (host/mcp_relay.h). The replica holding an MCP call
  // open on a question marks the session (one mark per session, the newest wins) and
  // learns the mark it replaced (replica "" when none), whose question is superseded;
  // Unmark removes the mark only while it is that replica's.
  virtual Result<QuestionMark> MarkQuestion(const std::string& session_id, const QuestionMark& mark) {
    (void)session_id, (void)mark;
    return Unimplemented("this store is not shared: questions stay in their process");
  }
  virtual Status UnmarkQuestion(const std::string& session_id, const std::string& replica) {
    (void)session_id, (void)replica;
    return {};
  }
  // The session's mark (replica "" when none).
  virtual Result<QuestionMark> QuestionHolder(const std::string& session_id) {
    (void)session_id;
    return QuestionMark{};
  }
  // Mail: Send leaves `body` for replica `to` (unread); Take hands `to` its unread mail
  // (now taken); Reply answers taken mail (NotFound once its sender discarded it);
  // Collect reads a mail's stage and, once replied, returns the reply and deletes the
  // mail; Withdraw deletes it only while unread and says whether it did (so the holder
  // takes it or the sender withdraws it, never both); Discard deletes it whatever its
  // stage (its sender stopped waiting). Sweep deletes mail and marks older than
  // `before_ms` (left by replicas that died).
  virtual Result<int64_t> SendMail(const std::string& to, const Json& body, int64_t now_ms) {
    (void)to, (void)body, (void)now_ms;
    return Unimplemented("this store is not shared: there is no other replica to write to");
  }
  virtual Result<std::vector<ReplicaMail>> TakeMail(const std::string& to) {
    (void)to;
    return std::vector<ReplicaMail>();
  }
  virtual Status ReplyMail(int64_t id, const Json& reply) {
    (void)id, (void)reply;
    return Unimplemented("this store is not shared: there is no mail");
  }
  virtual Result<MailState> CollectMail(int64_t id) {
    (void)id;
    return MailState{};
  }
  virtual Result<bool> WithdrawMail(int64_t id) {
    (void)id;
    return false;
  }
  virtual Status DiscardMail(int64_t id) {
    (void)id;
    return {};
  }
  virtual Status SweepMail(int64_t before_ms) {
    (void)before_ms;
    return {};
  }
  // Starts relaying session events to and from the other processes sharing this store;
  // `on_peer_event` runs on the relay's own thread with each event another process
  // published. nullptr where the store is not shared.
  virtual Result<std::unique_ptr<EventRelay>> RelayEvents(PeerEventHandler on_peer_event) {
    (void)on_peer_event;
    return std::unique_ptr<EventRelay>();
  }
};

// Opens a store from a URL: "sqlite:PATH", "sqlite::memory:" or "postgres://...".
Result<std::unique_ptr<Store>> OpenStore(const std::string& url);

}  // namespace reins

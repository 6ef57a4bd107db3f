#include "reins/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <unordered_map>

#include <boost/asio/this_coro.hpp>
#include <openssl/rand.h>

#include "domain/history_text.h"
#include "pipeline/commit_queue.h"
#include "pipeline/context_window.h"
#include "pipeline/deferred_runner.h"
#include "pipeline/replica_claim.h"
#include "pipeline/store_calls.h"
#include "pipeline/write_ledger.h"
#include "pipeline/session_queue.h"
#include "pipeline/spare_blocks.h"
#include "pipeline/turn_pipeline.h"
#include "turn/session_state.h"
#include "tools/tool_router.h"

namespace reins {

namespace {

// Events a streaming caller may see while the turn runs: what the runtime is doing,
// never what the person will be told (that waits for the commit, I12).
bool IsProgressEvent(EventType type) {
  switch (type) {
    case EventType::kTurnStarted:
    case EventType::kModelCall:
    case EventType::kModelError:
    case EventType::kToolExecuted:
    case EventType::kToolProgress:
    case EventType::kToolRejected:
    case EventType::kToolSkipped:
    case EventType::kToolDeferred:
    case EventType::kPlanInvalid:
    case EventType::kPlanFallback:
    case EventType::kPlanResumed:
    case EventType::kPlanAbandoned:
    case EventType::kPlanStepStarted:
    case EventType::kPlanStepRetry:
    case EventType::kPlanStepFinished:
      return true;
    default:
      return false;
  }
}

// A turn's record, from the thread's spare blocks (FromSpareBlocks): 1.2 KB.
struct RecordBlock : FromSpareBlocks<RecordBlock> {
  TurnRecord record;
};

// The outbox entries of a committed turn's deferred calls.
std::vector<OutboxEntry> DeferredEntries(const TurnRecord& record) {
  std::vector<OutboxEntry> entries;
  for (const ToolOutcome& t : record.result.tools) {
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    entries.push_back({t.idempotency_key, record.session_id, record.result.turn_id, t.name, t.args,
                       record.deferred_mode, "pending", 0, nullptr, t.step_id});
  }
  return entries;
}

// True when the turn's reply went out sentence by sentence (its reply.final says how much).
bool Streamed(const TurnResult& result) {
  for (const TraceEvent& e : result.events) {
    if (e.type == EventType::kReplyFinal) return e.data.contains("streamed");
  }
  return false;
}

// Await mode: one note per failed tool, appended to the reply; tools sharing a note share
// one mention (I5). The reply loses its sentences that claim those writes first (unless
// it was streamed: those sentences are out already). The notes, in order: none, and the
// reply as it was, when every call succeeded.
std::vector<std::string> NoteFailures(const DeferredRunner& deferred, const std::vector<DeferredResult>& finished,
                                      std::string_view user_text, TurnResult& result) {
  std::vector<std::string> notes;
  for (const DeferredResult& r : finished) {
    if (r.result.success) continue;
    std::string note = deferred.FailureNote(r.entry);
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
  }
  if (!notes.empty()) {
    std::string joined;
    for (const std::string& n : notes) joined += (joined.empty() ? "" : " ") + n;
    if (!Streamed(result)) result.reply = deferred.WithoutClaims(user_text, result.reply, finished);
    result.reply += (result.reply.empty() ? "" : "\n\n") + joined;
  }
  return notes;
}

}  // namespace

struct Runtime::Impl {
  // One tool catalog and everything built on it. A turn (and its deferred calls) runs
  // on the catalog it started with, holding it; ReplaceTools makes a new one for later
  // turns, and an old one goes when the last turn or deferred call using it ends.
  struct Catalog {
    AgentConfig config;
    ToolRouter tools;
    std::unique_ptr<TurnPipeline> pipeline;
    std::unique_ptr<DeferredRunner> deferred;
  };
  RuntimeParts parts;
  OwedReleases owed_releases;  // claims to release once the store is reachable again
  // Every store call of a turn goes through here: off the event loop on a shared store.
  // After owed_releases: the releases it may still run when destroyed use them.
  std::unique_ptr<StoreCalls> calls;
  std::unique_ptr<WriteLedger> writes;  // over calls: immediate writes recorded ahead
  std::unique_ptr<SessionView> view;  // over parts.store and parts.clock
  std::unique_ptr<CommitQueue> commits;  // over calls: turns that finish together commit together
  SessionQueue queue;
  std::string replica_id;  // names this process in the session claims of a shared store
  mutable std::mutex mu;  // guards rng, the random pool, sessions and the catalogs
  std::mt19937_64 rng;
  std::shared_ptr<Catalog> catalog;

  std::shared_ptr<Catalog> Current() {
    std::lock_guard lock(mu);
    return catalog;
  }

  // Turns of this process whose streamed reply staged writes and that have not
  // committed yet: recovery leaves their staged writes alone. Under mu.
  std::set<std::string> staging_turns;

  // The deferred calls a streamed turn queued since it last staged, into the store
  // before its reply's next sentence leaves (I12).
  struct Staged {
    size_t through = 0;  // result.tools looked at so far
    bool any = false;
  };
  Task<Status> StageWrites(TurnContext& ctx) {
    Staged& staged = ctx.Slot<Staged>();
    std::vector<OutboxEntry> entries;
    for (; staged.through < ctx.result.tools.size(); ++staged.through) {
      const ToolOutcome& t = ctx.result.tools[staged.through];
      if (t.status != ToolOutcome::Status::kDeferred) continue;
      entries.push_back({t.idempotency_key, std::string(ctx.session_id), ctx.result.turn_id, t.name, t.args,
                         ctx.config.deferred.mode, "staged", 0, nullptr, t.step_id, parts.clock->NowMs()});
    }
    if (entries.empty()) co_return OkStatus();
    if (!staged.any) {
      std::lock_guard lock(mu);
      staging_turns.insert(ctx.result.turn_id);
    }
    staged.any = true;
    std::function<Status(Store&)> stage = [&entries](Store& store) { return store.StageOutbox(entries); };
    Status written = co_await calls->Run(std::move(stage));
    if (!written.ok()) written = Status(written.code(), "the writes this turn queued could not be stored before its reply: " + written.message());
    co_return written;
  }

  std::shared_ptr<Catalog> Build(AgentConfig config) {
    auto c = std::make_shared<Catalog>();
    c->config = std::move(config);
    c->tools = BuildToolRouter(c->config, *parts.clock, ToolBackendSources{parts.tool_backends, parts.mcp_backends});
    ModelProvider& audit = parts.audit_model ? *parts.audit_model : *parts.model;
    c->pipeline = std::make_unique<TurnPipeline>(c->config, *parts.model, audit, c->tools, *writes);
    c->deferred = std::make_unique<DeferredRunner>(c->config, c->tools, *calls, *parts.clock);
    c->deferred->key_salt = parts.idempotency_salt;
    c->deferred->on_event = [this](const std::string& session_id, const TraceEvent& e) {
      if (parts.on_event) parts.on_event(session_id, e);
    };
    c->deferred->on_notice = [this](const std::string& session_id) {
      std::lock_guard lock(mu);
      if (auto it = sessions.find(session_id); it != sessions.end()) it->second->second->may_have_notices = true;
    };
    return c;
  }

  // What a session needs between turns, cached after the first load from the store.
  struct CachedSession {
    SessionState state;
    std::vector<Message> history;
    int turn_count = 0;
    // False once we know the session has no undelivered notice; a deferred failure
    // recorded by this runtime sets it again (from the deferred call's executor, while
    // a turn of the session may run on its own). Saves a query on almost every turn.
    std::atomic<bool> may_have_notices{true};
    // Turns older than `history` exist but no model call can include them any more.
    bool older_left_out = false;
    // The request text of the history's first messages, once a call reuses it (made
    // there; 8 bytes a session until then).
    std::unique_ptr<HistoryText> history_text;
    // A turn on it ended neither committed nor rolled back (its coroutines were destroyed
    // mid-way, their io_context gone): what it holds may differ from the store, and the
    // next turn reads the session again. Set before that turn can start (the session's
    // queue lets it go after).
    bool unsettled = false;
    // A session begun by the turn now running (Runtime::StartSession), not in the store
    // until that turn's commit writes it.
    std::unique_ptr<SessionRecord> unwritten;

    // Keeps only the history a model call may still see (ReachableStart).
    void Trim(size_t max_context_chars) {
      if (size_t start = ReachableStart(history, max_context_chars); start > 0) {
        history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(start));
        if (history_text) history_text->DropFront(start);
        older_left_out = true;
      }
    }
  };
  // Least recently used first. A turn holds its own reference, so evicting a session
  // that is running a turn is safe: its next turn reads it again from the store.
  std::list<std::pair<std::string, std::shared_ptr<CachedSession>>> lru;
  // Keyed by a view of the id its LRU entry holds (list nodes stay where they are): one
  // copy of the id per cached session, not two (a 48-byte block each).
  std::unordered_map<std::string_view, decltype(lru)::iterator> sessions;
  // Sessions whose first turn is running (StartSession), out of the LRU's reach: one
  // evicted before its turn commits would exist nowhere. Under mu.
  std::unordered_map<std::string, std::shared_ptr<CachedSession>> unwritten;

  SessionRecord NewSession(const Json& metadata, const std::string& tenant) {
    SessionRecord record;
    record.id = NewId("s_");
    record.tenant = tenant;
    record.created_at_ms = parts.clock->NowMs();
    record.metadata = metadata.is_object() ? metadata : Json::object();
    record.state = Json();  // set where the record is written itself (CreateSession); a turn's commit writes its own
    return record;
  }
  // A session now in the store: known to the view and cached, with nothing waiting.
  void Stored(const SessionRecord& record, std::shared_ptr<CachedSession> cached) {
    view->RememberTenant(record.id, record.tenant);
    cached->may_have_notices = false;
    std::lock_guard lock(mu);
    Remember(record.id, std::move(cached));
  }

  // Ids sort by creation time (11 hex digits of milliseconds, then 24 random ones), so
  // the store's indexes grow at their end instead of splitting pages at random.
  std::string NewId(const char* prefix) {
    static constexpr char kHex[] = "0123456789abcdef";
    unsigned char random[12];
    {
      std::lock_guard lock(mu);
      if (parts.id_seed != 0 || !TakeRandom(random)) {
        for (unsigned char& byte : random) byte = static_cast<unsigned char>(rng());
      }
    }
    std::string id = prefix;
    auto now = static_cast<uint64_t>(parts.clock->NowMs());
    for (int shift = 40; shift >= 0; shift -= 4) id += kHex[(now >> shift) & 15];
    for (unsigned char byte : random) {
      id += kHex[byte >> 4];
      id += kHex[byte & 15];
    }
    return id;
  }

  // Random bytes are drawn from OpenSSL a page at a time: one RAND_bytes per id cost
  // more than the rest of the id (a lock and a fork check each). Under mu. The process
  // never forks without exec, so no two processes hand out the same pool.
  unsigned char random_pool[4096];
  size_t random_used = sizeof random_pool;
  bool TakeRandom(unsigned char (&out)[12]) {
    if (random_used + sizeof out > sizeof random_pool) {
      if (RAND_bytes(random_pool, sizeof random_pool) != 1) return false;
      random_used = 0;
    }
    std::memcpy(out, random_pool + random_used, sizeof out);
    random_used += sizeof out;
    return true;
  }

  // The cached session, marked as just used; null when it is not cached. Under mu.
  std::shared_ptr<CachedSession> Touch(const std::string& session_id) {
    auto it = sessions.find(session_id);
    if (it == sessions.end()) return nullptr;
    lru.splice(lru.end(), lru, it->second);
    return it->second->second;
  }
  // Caches `session`, evicting the least recently used beyond the limit. Under mu.
  std::shared_ptr<CachedSession> Remember(const std::string& session_id, std::shared_ptr<CachedSession> session) {
    if (auto known = Touch(session_id)) return known;
    auto entry = lru.insert(lru.end(), {session_id, std::move(session)});
    sessions.emplace(entry->first, entry);
    while (lru.size() > std::max<size_t>(parts.session_cache, 1)) {
      sessions.erase(lru.front().first);
      lru.pop_front();
    }
    return lru.back().second;
  }

  // Drops the cached copy of a session. Under mu.
  void Forget(const std::string& session_id) {
    auto it = sessions.find(session_id);
    if (it == sessions.end()) return;
    lru.erase(it->second);
    sessions.erase(it);
  }

  // Drops the cached copy of a session that another replica has moved on since
  // (`turn_count` is its version in the store).
  void ForgetIfStale(const std::string& session_id, int turn_count) {
    std::lock_guard lock(mu);
    auto it = sessions.find(session_id);
    if (it != sessions.end() && it->second->second->turn_count != turn_count) Forget(session_id);
  }

  // A session begun by the turn that now ends (Runtime::StartSession) is no longer
  // unwritten: committed, it is in the store and cached (Finish); otherwise it exists
  // nowhere.
  void Settle(const std::string& session_id) {
    std::lock_guard lock(mu);
    if (!unwritten.empty()) unwritten.erase(session_id);
  }

  // The cached session; null when it is not cached, or when a turn on it was abandoned
  // (CachedSession::unsettled), so that it is read from the store again.
  std::shared_ptr<CachedSession> Cached(const std::string& session_id) {
    std::lock_guard lock(mu);
    if (!unwritten.empty()) {
      if (auto it = unwritten.find(session_id); it != unwritten.end()) return it->second;
    }
    std::shared_ptr<CachedSession> cached = Touch(session_id);
    if (cached == nullptr || !cached->unsettled) return cached;
    Forget(session_id);
    return nullptr;
  }

  // Reads a session from the store (on the store's threads: it touches nothing else).
  static Result<std::shared_ptr<CachedSession>> Read(Store& store, const std::string& session_id, size_t max_chars) {
    REINS_ASSIGN_OR_RETURN(SessionRecord record, store.LoadSession(session_id));
    auto cached = std::make_shared<CachedSession>();
    cached->state = SessionState::FromJson(record.state);
    cached->turn_count = record.turn_count;
    // Newest turns first, a page at a time, until older ones can no longer reach a
    // model call: a long session costs what its window costs, not its length.
    constexpr int kPageTurns = 32;
    for (int end = record.turn_count; end > 0;) {
      const int after = std::max(0, end - kPageTurns);
      REINS_ASSIGN_OR_RETURN(std::vector<Message> page, store.LoadMessages(session_id, TurnRange{after, end - after}));
      page.insert(page.end(), std::make_move_iterator(cached->history.begin()),
                  std::make_move_iterator(cached->history.end()));
      cached->history = std::move(page);
      end = after;
      if (end > 0 && ReachableStart(cached->history, max_chars) > 0) {
        cached->older_left_out = true;
        break;
      }
    }
    cached->Trim(max_chars);
    return cached;
  }

  // The cached session, read from the store first when it is not cached.
  Task<Result<std::shared_ptr<CachedSession>>> Load(const std::string& session_id, size_t max_chars) {
    if (std::shared_ptr<CachedSession> cached = Cached(session_id)) co_return cached;
    std::function<Result<std::shared_ptr<CachedSession>>(Store&)> read = [&session_id, max_chars](Store& store) {
      return Read(store, session_id, max_chars);
    };
    REINS_CO_ASSIGN_OR_RETURN(std::shared_ptr<CachedSession> loaded, co_await calls->Run(std::move(read)));
    std::lock_guard lock(mu);
    co_return Remember(session_id, std::move(loaded));
  }

  // OK when no earlier turn of the session used `input`'s idempotency key; else why
  // this turn does not run (the same request again, or the key used for another one).
  // Its own coroutine: what it reads is not kept in the frame of a turn that waits.
  Task<Status> CheckKeyUnused(const std::string& session_id, const TurnInput& input);

  // A turn from its admission to its end, on the heap (Runtime::RunTurnOnHeap).
  struct TurnRun : FromSpareBlocks<TurnRun> {
    TurnRun(std::shared_ptr<Catalog> turn_catalog, std::shared_ptr<CachedSession> cached, ReplicaClaim held,
            Clock& clock)
        : catalog(std::move(turn_catalog)),
          session(std::move(cached)),
          claim(std::move(held)),
          state_before(session->state.empty() ? HeapOptional<SessionState>() : session->state),
          ctx(catalog->config, clock, session->state, session->history) {}
    TurnRun(const TurnRun&) = delete;
    TurnRun& operator=(const TurnRun&) = delete;
    ~TurnRun() {
      if (!settled) session->unsettled = true;
    }

    std::shared_ptr<Catalog> catalog;        // this turn's, to its end
    std::shared_ptr<CachedSession> session;  // worked on in place
    ReplicaClaim claim;                      // held to the turn's very end, its deferred calls included
    // Restored when the turn is refused or cannot be committed. None when the session
    // remembered nothing (a new one): 184 bytes less held by each of its turns.
    HeapOptional<SessionState> state_before;
    TurnContext ctx;
    TurnPhaseMachine phase{ctx.result};             // the turn's status follows its phase
    // What a turn whose caller streams it has besides; none for the others (most turns:
    // the two took 56 bytes of every turn waiting on its model).
    struct Streaming {
      std::function<void(const TraceEvent&)> stream;  // the caller's
      std::vector<TraceEvent> held;                   // progress emitted before the turn was admitted
      void Flush() {
        for (const TraceEvent& h : held) stream(h);
        held.clear();
      }
    };
    std::unique_ptr<Streaming> streaming;

    bool settled = false;  // committed, or rolled back: the cached session is the store's
    void RollBack() {
      session->state = state_before ? std::move(*state_before) : SessionState();
      session->history.resize(ctx.history_base);
      if (session->history_text) session->history_text->Truncate(ctx.history_base);
      settled = true;
    }
  };
  // A well-formed turn (Runtime::RunTurnOnHeap checked it), from its place in the
  // session's queue to its result.
  Task<TurnResultBox> RunTurn(std::string session_id, std::unique_ptr<TurnInput> input);
  // Claims and loads the session, checks the input's idempotency key and builds the
  // turn's context: a turn ready to run, or why it does not.
  Task<Result<std::unique_ptr<TurnRun>>> Admit(const std::string& session_id, std::unique_ptr<TurnInput> input,
                                               int64_t arrived_ms);
  // Commits a turn that ran, hands its events on and runs its deferred calls; its
  // result, or why it could not be stored (the session then as it was).
  Task<TurnResultBox> Finish(const std::string& session_id, TurnRun& run);

  // The turn's deferred calls (`entries`, their outbox rows), once it is committed:
  // awaited (their failures noted on the reply) or handed to the background.
  // `keep_alive` is the turn's tool catalog, which owns `deferred`: its calls hold it.
  Task<void> RunDeferred(DeferredRunner& deferred, std::shared_ptr<const void> keep_alive, TurnRecord& record,
                         std::vector<OutboxEntry> entries, const std::function<void(const TraceEvent&)>& stream);
  // What one awaited deferred call did to the turn (its outcome, the plan's write, the
  // trace; `notes`, given with the last call, the failure note's event), as the store
  // records it. A plain function: RunDeferred's frame waits while the calls run.
  std::unique_ptr<DeferredOutcome> Settle(const DeferredResult& r, TurnResult& result,
                                          const std::vector<std::string>* notes, const std::string& noted_reply) const;
};

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

Result<std::unique_ptr<Runtime>> Runtime::Create(AgentConfig config, RuntimeParts parts) {
  if (!parts.model) return InvalidArgument("a runtime needs a model provider");
  if (!parts.store) return InvalidArgument("a runtime needs a store");
  if (!parts.clock) parts.clock = std::make_shared<SystemClock>();
  auto impl = std::make_unique<Impl>();
  impl->parts = std::move(parts);
  impl->rng.seed(impl->parts.id_seed != 0 ? impl->parts.id_seed : std::random_device{}());
  Store& store = *impl->parts.store;
  impl->calls = std::make_unique<StoreCalls>(store, store.shared() ? store.concurrent_calls() : 0);
  impl->writes = std::make_unique<WriteLedger>(*impl->calls, *impl->parts.clock);
  impl->catalog = impl->Build(std::move(config));
  impl->view = std::make_unique<SessionView>(store, *impl->parts.clock);
  impl->commits = std::make_unique<CommitQueue>(*impl->calls);
  // Seeded runs (scenarios) keep their ids reproducible: the replica's name takes none of the seed's sequence.
  impl->replica_id = impl->parts.id_seed != 0 ? "r_seed" + std::to_string(impl->parts.id_seed) : impl->NewId("r_");
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

std::shared_ptr<const AgentConfig> Runtime::config() const {
  std::shared_ptr<Impl::Catalog> current = impl_->Current();
  return std::shared_ptr<const AgentConfig>(current, &current->config);
}
std::string Runtime::Greeting() const { return impl_->Current()->config.greeting; }

Status Runtime::ReplaceTools(std::vector<ToolDef> tools) {
  AgentConfig config = impl_->Current()->config;
  config.tools = std::move(tools);
  std::shared_ptr<Impl::Catalog> next = impl_->Build(std::move(config));
  std::lock_guard lock(impl_->mu);
  impl_->catalog = std::move(next);  // the old one lives on with whoever still holds it
  return OkStatus();
}

Store& Runtime::store() { return *impl_->parts.store; }
const SessionView& Runtime::sessions() const { return *impl_->view; }
const Clock& Runtime::clock() const { return *impl_->parts.clock; }

size_t Runtime::cached_sessions() const {
  std::lock_guard lock(impl_->mu);
  return impl_->lru.size();
}

Result<std::string> Runtime::CreateSession(const Json& metadata, const std::string& tenant) {
  SessionRecord record = impl_->NewSession(metadata, tenant);
  record.state = SessionState{}.ToJson();
  REINS_RETURN_IF_ERROR(impl_->parts.store->CreateSession(record));
  impl_->Stored(record, std::make_shared<Impl::CachedSession>());
  return record.id;
}

// Not a coroutine: the input and the new session's record go to the heap before any
// frame holds them. The frame (with the Result it returns, about 800 bytes) then stays
// under the 1 KB over which glibc serves a block only after merging the small blocks
// freed since (malloc_consolidate), a few thousand instructions a turn.
Task<Result<StartedSession>> Runtime::StartSession(TurnInput first, const Json& metadata, const std::string& tenant) {
  return StartSession(std::make_unique<TurnInput>(std::move(first)),
                      std::make_unique<SessionRecord>(impl_->NewSession(metadata, tenant)));
}

Task<Result<StartedSession>> Runtime::StartSession(std::unique_ptr<TurnInput> first,
                                                   std::unique_ptr<SessionRecord> record) {
  std::string id = record->id;
  TurnResultBox ran = co_await Begin(std::move(first), std::move(record));
  if (!ran.result->ok()) co_return ran.result->status();
  co_return StartedSession{std::move(id), std::move(*ran.result).value()};
}

// Not a coroutine, as StartSession.
Task<TurnResultBox> Runtime::StartSessionOnHeap(std::unique_ptr<TurnInput> first, const Json& metadata,
                                                const std::string& tenant, std::string* id) {
  auto record = std::make_unique<SessionRecord>(impl_->NewSession(metadata, tenant));
  *id = record->id;
  return Begin(std::move(first), std::move(record));
}

namespace {

Task<TurnResultBox> Refused(Status why) { co_return why; }

// What every turn's input must be before its turn exists (RunTurnOnHeap, Begin).
Status CheckInput(const TurnInput* input) {
  return input == nullptr ? InvalidArgument("a turn needs an input") : CheckTurnInput(*input);
}

}  // namespace

// Not a coroutine: a session written in its turn's commit is settled by the turn itself
// (Impl::RunTurn lets go of it however the turn ends), so no frame waits here.
Task<TurnResultBox> Runtime::Begin(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record) {
  if (Status malformed = CheckInput(first.get()); !malformed.ok()) return Refused(std::move(malformed));
  if (impl_->calls->store().shared() || first->on_event) return CreateThenRun(std::move(first), std::move(record));
  std::string id = record->id;
  auto fresh = std::make_shared<Impl::CachedSession>();
  fresh->may_have_notices = false;
  fresh->unwritten = std::move(record);
  {
    std::lock_guard lock(impl_->mu);
    impl_->unwritten.emplace(id, std::move(fresh));
  }
  return impl_->RunTurn(std::move(id), std::move(first));
}

Task<TurnResultBox> Runtime::CreateThenRun(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record) {
  record->state = SessionState{}.ToJson();
  std::function<Status(Store&)> create = [&record](Store& store) { return store.CreateSession(*record); };
  REINS_CO_RETURN_IF_ERROR(co_await impl_->calls->Run(std::move(create)));
  impl_->Stored(*record, std::make_shared<Impl::CachedSession>());
  co_return co_await impl_->RunTurn(record->id, std::move(first));
}

TurnResultBox::TurnResultBox(Status refused) : result(std::make_unique<Result<TurnResult>>(std::move(refused))) {}
TurnResultBox::TurnResultBox(TurnResult ran) : result(std::make_unique<Result<TurnResult>>(std::move(ran))) {}

Task<Result<TurnResult>> Runtime::RunTurn(const std::string& session_id, TurnInput input) {
  TurnResultBox ran = co_await RunTurnOnHeap(session_id, std::move(input));
  co_return std::move(*ran.result);
}

// Not a coroutine: the input goes to the heap before any frame holds it.
Task<TurnResultBox> Runtime::RunTurnOnHeap(std::string session_id, TurnInput input) {
  return RunTurnOnHeap(std::move(session_id), std::make_unique<TurnInput>(std::move(input)));
}

// Not a coroutine: a malformed input is refused before the turn's frame exists, and the
// check's status takes no place in a frame that waits as long as the turn does.
Task<TurnResultBox> Runtime::RunTurnOnHeap(std::string session_id, std::unique_ptr<TurnInput> input) {
  if (Status malformed = CheckInput(input.get()); !malformed.ok()) return Refused(std::move(malformed));
  return impl_->RunTurn(std::move(session_id), std::move(input));
}

Task<TurnResultBox> Runtime::Impl::RunTurn(std::string session_id, std::unique_ptr<TurnInput> input) {
  // One turn of a session at a time, in arrival order.
  const int64_t arrived_ms = parts.clock->NowMs();
  co_await queue.Acquire(session_id);
  struct Leave {  // the next turn in line goes on however this one ends
    Impl& impl;
    const std::string& session_id;
    ~Leave() {
      impl.Settle(session_id);
      impl.queue.Release(session_id);
    }
  } leave{*this, session_id};
  // Three steps, each a coroutine of its own, around one heap object: this frame, which
  // lives as long as the turn waits on its model, holds a pointer to the turn and not
  // what admitting and committing it kept (GCC keeps every local and temporary of a
  // coroutine in its frame for the coroutine's whole life).
  Result<std::unique_ptr<TurnRun>> admitted = co_await Admit(session_id, std::move(input), arrived_ms);
  if (!admitted.ok()) co_return admitted.status();
  TurnRun& run = **admitted;
  Status ran = co_await run.catalog->pipeline->Run(run.ctx, run.phase);
  if (!ran.ok()) {
    run.RollBack();
    co_return ran;
  }
  co_return co_await Finish(session_id, run);
}

Task<Result<std::unique_ptr<Runtime::Impl::TurnRun>>> Runtime::Impl::Admit(const std::string& session_id,
                                                                           std::unique_ptr<TurnInput> input,
                                                                           int64_t arrived_ms) {
  // Replicas sharing the store: this turn holds the session's claim to its very end
  // (its deferred calls included), as it holds the in-process queue.
  const std::shared_ptr<Catalog> config_now = Current();
  const int64_t turn_ms = config_now->config.turn_timeout_ms > 0 ? config_now->config.turn_timeout_ms : 600000;
  const int64_t claim_ttl_ms = turn_ms + config_now->config.deferred.timeout_ms + 30000;
  const bool shared = calls->store().shared();
  REINS_CO_ASSIGN_OR_RETURN(ReplicaClaim claim, co_await ClaimForTurn(*calls, *parts.clock, owed_releases, session_id,
                                                                       replica_id, claim_ttl_ms, turn_ms));
  if (claim.held()) ForgetIfStale(session_id, claim.turn_count());
  REINS_CO_ASSIGN_OR_RETURN(std::shared_ptr<CachedSession> loaded,
                            co_await Load(session_id, config_now->config.max_context_chars));
  if (!input->idempotency_key.empty()) {
    // Checked inside the session's queue: a retry that arrives while the first try
    // runs waits for it, then finds its key.
    Status unused = co_await CheckKeyUnused(session_id, *input);
    if (!unused.ok()) co_return unused;
  }
  // The turn works on the cached session in place. If it is refused or cannot be
  // committed, the state is restored and the history cut back, so the session is
  // exactly as it was (turns of one session never overlap; see runtime.h).
  auto run = std::make_unique<TurnRun>(Current(), std::move(loaded), std::move(claim), *parts.clock);
  CachedSession& session = *run->session;
  TurnContext& ctx = run->ctx;
  const AgentConfig& config = run->catalog->config;
  ctx.older_history_left_out = session.older_left_out;
  ctx.history_text = &session.history_text;
  ctx.key_salt = parts.idempotency_salt;
  // The turn's budget up to its reply runs from now: waiting in the queue was not it.
  if (config.turn_timeout_ms > 0) ctx.deadline_ms = parts.clock->NowMs() + config.turn_timeout_ms;
  ctx.session_id = session_id;
  ctx.result.turn_id = NewId("t_");
  ctx.input = std::move(*input);
  input.reset();
  if (ctx.input.on_event) {
    run->streaming = std::make_unique<TurnRun::Streaming>();
    run->streaming->stream = std::move(ctx.input.on_event);
    // Progress streams live, but only once the input is accepted: a refused turn (409,
    // 422...) must not have begun a stream (docs/http-api.md).
    ctx.streamed = std::make_unique<TurnContext::Streamed>();
    ctx.streamed->on_emit = [r = run.get()](const TraceEvent& e) {
      if (!IsProgressEvent(e.type)) return;
      if (!r->ctx.admitted) {
        r->streaming->held.push_back(e);
        return;
      }
      r->streaming->Flush();
      r->streaming->stream(e);
    };
    // The reply streams as it is written; each sentence waits for the writes before it.
    ctx.streamed->send_reply_text = [r = run.get()](std::string_view text) {
      const TraceEvent delta{EventType::kReplyDelta, r->ctx.result.turn_number, r->ctx.clock.NowMs(), Json{{"text", text}}};
      r->streaming->stream(delta);
    };
    ctx.streamed->stage_writes = [this](TurnContext& c) { return StageWrites(c); };
  }
  ctx.result.turn_number = session.turn_count + 1;
  if (session.may_have_notices || shared) {  // another replica may have recorded one
    std::function<Result<std::vector<Notice>>(Store&)> pending = [&session_id](Store& store) {
      return store.PendingNotices(session_id);
    };
    Result<std::vector<Notice>> notices = co_await calls->Run(std::move(pending));
    if (notices.ok()) {
      for (const Notice& n : *notices) ctx.extend().pending_notices.emplace_back(n.id, n.text);
      session.may_have_notices = !notices->empty();
    }
  }
  if (config.floor.enabled) {
    std::function<Result<Lease>(Store&)> lease = [&session_id](Store& store) { return store.LoadLease(session_id); };
    REINS_CO_ASSIGN_OR_RETURN(Lease held, co_await calls->Run(std::move(lease)));
    ctx.SetLease(std::move(held));
  }
  ctx.waited_ms = parts.clock->NowMs() - arrived_ms;  // the floor policy refuses a stale turn
  co_return std::move(run);
}

Task<TurnResultBox> Runtime::Impl::Finish(const std::string& session_id, TurnRun& run) {
  TurnContext& ctx = run.ctx;
  CachedSession& session = *run.session;
  Catalog& catalog = *run.catalog;
  static const std::function<void(const TraceEvent&)> kNoStream;
  const std::function<void(const TraceEvent&)>& stream = run.streaming ? run.streaming->stream : kNoStream;
  // On the heap: the record is needed only once the turn has run.
  const auto recorded = std::make_unique<RecordBlock>();
  TurnRecord& record = recorded->record;
  record.session_id = session_id;
  const bool begins_session = session.unwritten != nullptr;  // written with this commit
  if (begins_session) record.new_session = std::move(*session.unwritten);
  record.speaker = ctx.input.speaker;
  record.input = TurnInputToJson(ctx.input);
  record.result = std::move(ctx.result);
  record.new_messages.assign(session.history.begin() + static_cast<std::ptrdiff_t>(ctx.history_base),
                             session.history.end());
  record.session_state = session.state.ToJson();
  const PendingDecisions& decided = ctx.decisions();
  if (decided.answered) {
    record.answered_clarification_id = decided.answered->id;
    record.chosen_option_id = decided.chosen_option_id;
  }
  record.withdrawn_clarification_id = decided.withdrawn_clarification_id;
  if (decided.decided_approval) {
    record.decided_approval_id = decided.decided_approval->id;
    record.approval_decision = decided.approval_answer.decision ? "granted" : "denied";
    record.approved_args = decided.approved_args;
    record.approval_message = decided.approval_answer.message;
  }
  record.cancelled_approval_id = decided.cancelled_approval_id;
  record.lapsed_approval_id = decided.lapsed_approval_id;

  record.delivered_notices = ctx.extras().delivered_notices;
  record.lease_change = ctx.lease_change();
  record.lease_expected_version = ctx.lease().version;
  const Lease& after = ctx.lease_change() ? *ctx.lease_change() : ctx.lease();
  if (after.ActiveAt(parts.clock->NowMs())) record.result.lease = after;
  record.deferred_mode = catalog.config.deferred.mode;
  record.created_at_ms = parts.clock->NowMs();
  record.claim_token = run.claim.token();
  record.outbox_staged = stream && ctx.Slot<Staged>().any;  // no slot for a turn that does not stream
  Status committed = co_await commits->Commit(record);
  if (record.outbox_staged) {
    // Committed, its staged writes are pending (or withdrawn); not committed, they are
    // what a crash leaves: the person may have read that they were done, and recovery
    // runs them (docs/streaming.md).
    std::lock_guard lock(mu);
    staging_turns.erase(record.result.turn_id);
  }
  if (!committed.ok()) {
    run.RollBack();
    // Keep the store's code: a lease moved by another writer is a conflict, not a crash.
    co_return Status(committed.code(), "the turn could not be stored: " + committed.message());
  }
  run.settled = true;
  if (begins_session) {
    session.unwritten.reset();
    Stored(*record.new_session, run.session);
  }
  session.turn_count = record.result.turn_number;
  session.Trim(catalog.config.max_context_chars);
  // A tool call still waiting on the withdrawn question (an MCP elicitation) lets go.
  // Unless this turn asked anew through such a call: the backend let the old call go
  // when the new one began, and a withdrawal now would reach the new question.
  const PendingClarification* asked =
      run.state_before && run.state_before->pending_clarification ? &*run.state_before->pending_clarification : nullptr;
  const auto& asks_now = session.state.pending_clarification;
  if (asked && !record.withdrawn_clarification_id.empty() && asked->id == record.withdrawn_clarification_id &&
      !(asks_now && catalog.tools.ResumesQuestions(asks_now->tool))) {
    if (ToolBackend* backend = catalog.tools.Find(asked->tool)) backend->Withdraw(session_id);
  }
  // The turn and its outbox rows are durable: only now may deferred calls run (I12).
  if (parts.after_commit) parts.after_commit(record.result.turn_id);
  if (stream) run.streaming->Flush();
  if (parts.on_turn) parts.on_turn(session_id, record.result.events);
  for (const TraceEvent& e : record.result.events) {
    if (stream && !IsProgressEvent(e.type)) stream(e);  // the reply and what it asks, now durable
    if (parts.on_event) parts.on_event(session_id, e);
  }
  const std::string delivered = record.result.reply;
  // The runner's coroutine only for a turn that deferred a call.
  if (std::vector<OutboxEntry> entries = DeferredEntries(record); !entries.empty()) {
    co_await RunDeferred(*catalog.deferred, run.catalog, record, std::move(entries), stream);
  }
  if (record.result.reply != delivered && !ctx.history().empty() && ctx.history().back().role == Role::kAssistant) {
    // The failure note, for the model's next call too (the turn's context is the session's).
    ctx.EditMessage(ctx.history().size() - 1).text = record.result.reply;
  }
  // The result the caller gets says what is still pending after the turn (a
  // safety-override turn, a blocked one), not only what this turn asked; the stored
  // record keeps what the turn itself opened.
  TurnResult& result = record.result;
  if (!result.clarification && session.state.pending_clarification) result.clarification = *session.state.pending_clarification;
  // One that lapsed while a turn was held back (a blocked or cancelled turn does not
  // reach the lapse) is not offered: GET session hides it too.
  const HeapOptional<PendingApproval>& pending = session.state.pending_approval;
  if (!result.approval && pending && !pending->LapsedAt(parts.clock->NowMs())) result.approval = *pending;
  co_return std::move(result);
}

Task<Status> Runtime::Impl::CheckKeyUnused(const std::string& session_id, const TurnInput& input) {
  const std::string& key = input.idempotency_key;
  std::function<Result<std::optional<StoredTurn>>(Store&)> find = [&session_id, &key](Store& store) {
    return store.FindTurnByKey(session_id, key);
  };
  REINS_CO_ASSIGN_OR_RETURN(std::optional<StoredTurn> earlier, co_await calls->Run(std::move(find)));
  if (!earlier) co_return OkStatus();
  // The same request, whichever trace the retry came in and whatever words it was in.
  Json asked = earlier->input, now = TurnInputToJson(input);
  for (const char* incidental : {"traceparent", "words"}) {
    if (asked.is_object()) asked.erase(incidental);
    now.erase(incidental);
  }
  if (asked != now) {
    co_return InvalidArgument("idempotency key '" + key + "' was already used by turn " +
                              std::to_string(earlier->turn_number) +
                              " for a different request; use a new key for a new request");
  }
  co_return AlreadyExists("a turn with idempotency_key '" + key + "' already ran");
}

Task<void> Runtime::Impl::RunDeferred(DeferredRunner& deferred, std::shared_ptr<const void> keep_alive,
                                      TurnRecord& record, std::vector<OutboxEntry> entries,
                                      const std::function<void(const TraceEvent&)>& stream) {
  TurnResult& result = record.result;
  DeferredTurn turn{result.turn_number, record.input.is_object() ? record.input.value("traceparent", "") : ""};
  if (record.deferred_mode == DeferredMode::kBackground) {
    deferred.Spawn(co_await boost::asio::this_coro::executor, std::move(entries), std::move(turn), DeferredRun::kBackground,
                   std::move(keep_alive));
    co_return;
  }
  std::vector<DeferredResult> finished = co_await deferred.RunAwait(std::move(entries), std::move(turn), keep_alive);
  const std::string said = record.input.is_object() ? record.input.value("say", "") : "";
  const std::vector<std::string> notes = NoteFailures(deferred, finished, said, result);
  const std::string noted_reply = notes.empty() ? "" : result.reply;
  for (const DeferredResult& r : finished) {
    std::unique_ptr<DeferredOutcome> o = Settle(r, result, &r == &finished.back() ? &notes : nullptr, noted_reply);
    // The reply the person gets is already honest whether or not the store takes it now.
    co_await deferred.RecordAwaited(*o, keep_alive);
    for (const TraceEvent& e : o->events) {
      if (stream) stream(e);
      if (parts.on_event) parts.on_event(record.session_id, e);
    }
  }
}

std::unique_ptr<DeferredOutcome> Runtime::Impl::Settle(const DeferredResult& r, TurnResult& result,
                                                       const std::vector<std::string>* notes,
                                                       const std::string& noted_reply) const {
  for (ToolOutcome& t : result.tools) {
    if (t.idempotency_key != r.entry.key) continue;
    t.result = r.result;
    t.latency_ms = r.latency_ms;
    if (!r.result.success) t.message = r.result.error;
  }
  for (PlanStep& step : result.plan) {
    for (PlanStep::Write& w : step.deferred_writes) {
      if (w.key == r.entry.key) w.outcome = r.result.success ? "succeeded" : "failed";
    }
  }
  result.events.push_back(r.event);
  std::vector<TraceEvent> events = {r.event};
  if (notes != nullptr && !notes->empty()) {
    TraceEvent note{EventType::kDeferredNote, result.turn_number, parts.clock->NowMs(), {{"text", *notes}}};
    result.events.push_back(note);
    events.push_back(note);
  }
  return std::make_unique<DeferredOutcome>(
      DeferredOutcome{r.entry.key, r.result, r.latency_ms, std::move(events), "", noted_reply, parts.clock->NowMs()});
}

Task<Result<int>> Runtime::ResumeOutbox(int64_t quiet_ms) {
  // Claims owed since the store was last unreachable go first, so an idle replica does
  // not leave them to lapse.
  StoreCalls& calls = *impl_->calls;
  std::function<Result<std::vector<OutboxEntry>>(Store&)> unfinished = [this](Store& store) {
    if (store.shared()) impl_->owed_releases.Retry(store);
    return store.UnfinishedOutbox();
  };
  REINS_CO_ASSIGN_OR_RETURN(std::vector<OutboxEntry> entries, co_await calls.Run(std::move(unfinished)));
  std::shared_ptr<Impl::Catalog> catalog = impl_->Current();
  const int64_t now = impl_->parts.clock->NowMs();
  // A staged write (a streamed reply's) is run only once its turn is surely gone: not
  // running here, and on a shared store older than any turn's claim on its session.
  const AgentConfig& config = catalog->config;
  const int64_t turn_ms = config.turn_timeout_ms > 0 ? config.turn_timeout_ms : 600000;
  const int64_t staged_lapse_ms = turn_ms + config.deferred.timeout_ms + 30000;
  int ran = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (quiet_ms > 0 && now - entries[i].updated_at_ms < quiet_ms) continue;
    if (entries[i].status == "staged") {
      bool running_here;
      {
        std::lock_guard lock(impl_->mu);
        running_here = impl_->staging_turns.count(entries[i].turn_id) > 0;
      }
      if (running_here || (calls.store().shared() && now - entries[i].updated_at_ms < staged_lapse_ms)) continue;
    }
    std::vector<OutboxEntry> one;
    one.push_back(entries[i]);
    DeferredTurn unknown;  // a recovered write's turn is not in memory: its own trace
    std::vector<DeferredResult> done = co_await catalog->deferred->RunAwait(std::move(one), std::move(unknown), catalog, DeferredRun::kResumed);
    for (const DeferredResult& r : done) co_await catalog->deferred->RecordUnattended(r);
    ran += static_cast<int>(done.size());
  }
  co_return ran;
}

}  // namespace reins

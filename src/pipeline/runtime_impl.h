// Runtime::Impl: what a Runtime (reins/runtime.h) is made of, shared by its files:
//   runtime.cc           creating it, its sessions and the way into a turn
//   runtime_turn.cc      a turn: admitted in the session's queue, run, committed
//   runtime_deferred.cc  a committed turn's deferred calls, and recovery of the outbox
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "reins/runtime.h"
#include "pipeline/commit_queue.h"
#include "pipeline/deferred_runner.h"
#include "pipeline/id_source.h"
#include "pipeline/replica_claim.h"
#include "pipeline/session_cache.h"
#include "pipeline/session_queue.h"
#include "pipeline/spare_blocks.h"
#include "pipeline/store_calls.h"
#include "pipeline/turn_pipeline.h"
#include "pipeline/write_ledger.h"
#include "tools/tool_router.h"

namespace reins {

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
  std::unique_ptr<ClaimQueue> claims;    // over calls: turns that begin together claim together (shared stores)
  std::unique_ptr<IdSource> ids;
  std::unique_ptr<SessionCache> cache;
  SessionQueue queue;
  std::string replica_id;  // names this process in the session claims of a shared store
  mutable std::mutex mu;  // guards catalog and staging_turns
  std::shared_ptr<Catalog> catalog;
  // Turns of this process whose streamed reply staged writes and that have not
  // committed yet: recovery leaves their staged writes alone.
  std::set<std::string> staging_turns;

  std::shared_ptr<Catalog> Current() {
    std::lock_guard lock(mu);
    return catalog;
  }
  std::shared_ptr<Catalog> Build(AgentConfig config);

  // A new session's record, not yet stored.
  SessionRecord NewSession(const Json& metadata, const std::string& tenant);
  // A session now in the store: known to the view and cached, with nothing waiting.
  void Stored(const SessionRecord& record, std::shared_ptr<CachedSession> cached);
  // The cached session, read from the store first when it is not cached.
  Task<Result<std::shared_ptr<CachedSession>>> Load(const std::string& session_id, size_t max_chars);

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
    ReplicaClaim claim;                      // held to the turn's end: its commit, or its deferred calls' end
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
      session->history.Truncate(ctx.history_base);
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
  // A streamed turn's progress and reply text go to its caller (Admit).
  void StreamTo(TurnRun& run);
  // Commits a turn that ran, hands its events on and runs its deferred calls; its
  // result, or why it could not be stored (the session then as it was).
  Task<TurnResultBox> Finish(const std::string& session_id, TurnRun& run);
  // What the store keeps of a turn that ran, into `record` (Finish).
  void Record(const std::string& session_id, TurnRun& run, TurnRecord& record) const;
  // The deferred calls a streamed turn queued since it last staged, into the store
  // before its reply's next sentence leaves (I12).
  struct Staged {
    size_t through = 0;  // result.tools looked at so far
    bool any = false;
  };
  Task<Status> StageWrites(TurnContext& ctx);

  // The outbox entries of a committed turn's deferred calls.
  static std::vector<OutboxEntry> DeferredEntries(const TurnRecord& record);
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

}  // namespace reins

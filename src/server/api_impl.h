// Api::Impl: the state the API's handlers share, and the handlers themselves, one
// endpoint each (routes.h names them). Split by what they serve: sessions
// (session_handlers.cc), turns (turn_handlers.cc), traces (trace_handlers.cc), probes
// and metrics (probe_handlers.cc), the OpenAI-compatible door (chat_handlers.cc);
// api.cc admits and routes. Internal to src/server.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/api.h"
#include "server/chat_wire.h"
#include "server/event_stream.h"
#include "server/rate_limiter.h"
#include "server/responses.h"
#include "server/routes.h"

namespace reins {

// One request on its way through a handler: what was asked, where to answer, the
// session and tenant the route and the key named ("" where none), and the route's
// metrics label and when the request came (for a handler that holds its response:
// Api::Impl::Recorder).
struct Exchange {
  const ServerRequest& req;
  ServerResponse& res;
  const std::string& session_id;
  const std::string& tenant;
  // The caller's API key (the speakers and roles it may act as); null without keys.
  const KeyStore::Grant* grant;
  std::string_view route;
  std::chrono::steady_clock::time_point start;
  std::string_view item;  // the route's item after the session (Route::item)
};

// What GET .../trace shows of each turn (its events), and GET .../timeline (the
// timeline a person reads, domain/timeline.h).
enum class TraceForm { kEvents, kTimeline };

// A page of a session's trace: the turns' JSON texts, the last turn's number, and
// whether turns may follow it (the page stopped at its count or its bytes).
struct TracePage {
  std::vector<std::string> turns;
  int last_number = 0;
  bool more = false;
};

// A refusal of NewSession as the API's status: beyond the tenant's quota is 429.
ApiError SessionRefusal(const Status& s);
// The answer to POST /v1/sessions that brought the session's first turn: the session's
// fields with the turn's result (`turn`, JSON text) as "turn".
std::string SessionBegunText(const std::string& id, const std::string& greeting, std::string_view turn);

// Whom a turn's result answers: its session, the key a retry would bring, and whether
// the request began the session (POST /v1/sessions: 201 with the session's fields),
// stored before its turn or with the turn's commit (counted once the turn is answered).
struct TurnAnswer {
  enum class Session { kExisting, kCreatedFirst, kBegunByTurn };
  std::string session_id;
  std::string key;
  Session session = Session::kExisting;
};

struct Api::Impl : std::enable_shared_from_this<Api::Impl> {
  Runtime& runtime;
  const SessionView& sessions;  // the runtime's read side: the server reads nothing else
  // The first event loop's executor: a tenant's quota is counted and its session
  // created there, one at a time (OnFirstLoop).
  boost::asio::any_io_executor first_loop;
  // Whole traces are read and rendered here, never on a loop that runs turns; on a shared
  // store every store call the server makes runs here (OnStore), one thread per
  // connection the store has.
  boost::asio::thread_pool readers;
  bool store_shared;
  std::shared_ptr<const KeyStore> keys;
  Metrics& metrics;
  ApiOptions options;
  RateLimiter limiter;
  std::atomic<bool> shutting_down{false};
  std::atomic<int> inflight{0};  // turns running now (--max-inflight)

  std::mutex mu;  // guards subscribers, model_call_started and trace_reads
  std::map<std::string, std::vector<std::weak_ptr<EventStream>>> subscribers;
  std::map<std::string, std::pair<int64_t, std::string>> model_call_started;  // session -> (at_ms, purpose)
  std::map<std::string, int> trace_reads;  // tenant -> heavy reads in flight (--max-trace-reads)

  Impl(Runtime& r, boost::asio::any_io_executor s, std::shared_ptr<const KeyStore> k, Metrics& m, ApiOptions o)
      : runtime(r), sessions(r.sessions()), first_loop(std::move(s)),
        readers(r.store().shared() ? static_cast<size_t>(r.store().concurrent_calls()) : 1),
        store_shared(r.store().shared()), keys(std::move(k)), metrics(m),
        options(std::move(o)), limiter(options.rate_per_second, options.rate_burst) {}
  ~Impl() { readers.join(); }

  int64_t NowMs() const { return sessions.NowMs(); }

  // Runs `work` on `executor` and returns its value on the caller's executor: one
  // coroutine is spawned there, nothing else is allocated for the hop; none when the
  // caller already runs on `executor` (one I/O thread). (Through std::optional: Asio
  // needs a default-constructible result, Result<T> is not.)
  template <typename T>
  static Task<std::optional<T>> OptionalOf(std::function<Task<T>()> work) {
    co_return co_await work();
  }
  template <typename T>
  static Task<std::optional<T>> OptionalOfSync(std::function<T()> work) {
    co_return work();
  }
  template <typename T>
  Task<T> On(boost::asio::any_io_executor executor, std::function<Task<T>()> work) {
    if ((co_await boost::asio::this_coro::executor) == executor) co_return co_await work();
    // Named, not a temporary in the co_await expression: GCC 12 destroys such
    // temporaries wrongly in coroutines.
    Task<std::optional<T>> spawned = OptionalOf<T>(std::move(work));
    std::optional<T> out = co_await boost::asio::co_spawn(executor, std::move(spawned), boost::asio::use_awaitable);
    co_return std::move(*out);
  }
  template <typename T>
  Task<T> OnFirstLoop(std::function<Task<T>()> work) {
    co_return co_await On<T>(first_loop, std::move(work));
  }
  // The same for work that does not suspend (reads through the session view).
  template <typename T>
  Task<T> OnSync(boost::asio::any_io_executor executor, std::function<T()> work) {
    if ((co_await boost::asio::this_coro::executor) == executor) co_return work();
    Task<std::optional<T>> spawned = OptionalOfSync<T>(std::move(work));
    std::optional<T> out = co_await boost::asio::co_spawn(executor, std::move(spawned), boost::asio::use_awaitable);
    co_return std::move(*out);
  }
  // Work that only calls the store (reads through the session view, creating a
  // session): a shared store's calls block on the network, so they run on the readers'
  // threads, never on a thread that serves HTTP; a one-process store's run in place,
  // where they take microseconds (the store and the view take mutexes of their own).
  template <typename T>
  Task<T> OnStore(std::function<T()> work) {
    if (store_shared) co_return co_await OnSync<T>(readers.get_executor(), std::move(work));
    co_return work();
  }
  // A turn's result, on the heap: asio keeps a coroutine's return value in its frame,
  // and every frame between the connection and the runtime would hold a TurnResult's
  // ~770 bytes for as long as the turn waits on its model. Turns run on the event loop
  // of the connection that brought them: the handler awaits the runtime's own coroutine
  // (Runtime::RunTurnOnHeap, its input on the heap too) in place, with no hop and no
  // frame of this layer between; callers name the task before awaiting it (GCC 12, see
  // On).
  using TurnOutcome = std::unique_ptr<Result<TurnResult>>;
  // A streamed turn (POST .../turns, /v1/chat/completions): its events go to `stream`,
  // it runs on `here` (the connection's loop) to its end whatever happens to the
  // connection (a client that goes away does not stop it), and when it ends its result
  // is set, its log line written and `stream` finished. `slot` is held until then.
  using SharedTurnResult = std::shared_ptr<std::optional<Result<TurnResult>>>;
  SharedTurnResult SpawnStreamedTurn(const boost::asio::any_io_executor& here, std::string id, TurnInput in,
                                     std::shared_ptr<EventStream> stream, std::shared_ptr<void> slot);

  // api.cc: admission and routing.
  std::optional<ApiError> Admit(const ServerRequest& req, const Route& route, std::string* tenant,
                                const KeyStore::Grant** grant, Headers* extra);
  void Record(std::string_view method, std::string_view path, std::string_view remote, std::string_view route,
              int status, std::string_view tenant, std::chrono::steady_clock::duration took);
  // Records the exchange's request once its held response is answered (`answered` of
  // ServerResponse::Hold): the request is gone by then, and Handle returned.
  std::function<void(int status)> Recorder(const Exchange& x);
  Task<bool> Admitted(const ServerRequest& req, ServerResponse& res, const Route& route, std::string* tenant,
                      const KeyStore::Grant** grant);
  Task<bool> Routed(Exchange x, bool per_session, bool found, Endpoint endpoint, const char* method);

  // session_handlers.cc
  Task<void> CreateSession(Exchange x);
  // A new session of `tenant`, within its quota (ResourceExhausted beyond it).
  Task<Result<std::string>> NewSession(Json metadata, std::string tenant);
  Task<void> GetSession(Exchange x);
  Task<std::optional<ApiError>> CheckSession(std::string id, std::string tenant);
  // turn_handlers.cc
  Task<void> PostTurn(Exchange x);
  // POST /v1/sessions with a `turn`: the session begun by its first turn.
  Task<void> StartSession(Exchange x, Json metadata, std::unique_ptr<TurnInput> first);
  Task<bool> AcceptTurn(Exchange x, TurnInput* in, std::shared_ptr<void>* slot);
  // A turn (the runtime's task, not yet started) whose response is held
  // (ServerResponse::Hold): spawned on `here`, the connection's executor, with nothing
  // of the request's path waiting with it, and answered there when it ends. `slot` is
  // held until then.
  void SpawnHeldTurn(const boost::asio::any_io_executor& here, Task<TurnResultBox> turn, TurnAnswer to,
                     std::shared_ptr<ServerResponse> held, std::shared_ptr<void> slot);
  Task<void> AnswerHeld(std::shared_ptr<ServerResponse> held, TurnAnswer to, TurnOutcome outcome,
                        std::shared_ptr<void> slot);
  Task<void> AnswerTurn(ServerResponse& res, const TurnAnswer& to, TurnOutcome outcome);
  Task<void> SendRefusal(ServerResponse& res, const std::string& id, const Status& refused);
  Task<std::optional<TurnResultBox>> ControlTurn(Exchange& x, std::unique_ptr<TurnInput> in);
  Task<void> CancelLease(Exchange x);
  Task<void> RevokeApproval(Exchange x);
  // A turn spoken with the caller's key: refused (403 speaker_not_allowed) when the key
  // names the speakers it speaks for and this is not one; otherwise given the key's
  // roles (an approval whose approvers list role:NAME admits them).
  static std::optional<ApiError> ActAs(const KeyStore::Grant* grant, TurnInput& in);
  Task<void> StreamTurn(ServerResponse& res, std::string id, std::unique_ptr<TurnInput> in, std::shared_ptr<void> slot,
                        Headers headers = {});
  Task<void> AnswerUnstarted(ServerResponse& res, const std::string& id, const std::string& key,
                             const Result<TurnResult>& refused);
  Task<void> SendLastEvent(ServerResponse& res, const Result<TurnResult>& r);
  Task<std::optional<Json>> Replay(std::string id, std::string key);
  // A place among the turns in flight, held until the turn ends; nullopt when full.
  std::optional<std::shared_ptr<void>> TakeTurnSlot();
  // chat_handlers.cc: the OpenAI-compatible door
  Task<void> ChatCompletions(Exchange x);
  Task<void> ListModels(Exchange x);
  Task<void> GetModel(Exchange x);
  // trace_handlers.cc
  Task<void> GetTrace(Exchange x);
  Task<void> GetTimeline(Exchange x);
  Task<void> StreamEvents(Exchange x);
  // viewer_handlers.cc: the trace viewer's files and the sessions it lists
  Task<void> ServeUi(Exchange x);
  Task<void> ListSessions(Exchange x);
  // probe_handlers.cc
  Task<void> Health(Exchange x);
  Task<void> Ready(Exchange x);
  Task<void> RenderMetrics(Exchange x);
  void Count(const std::string& session_id, const TraceEvent& e);

 private:
  struct ChatOutcome;
  struct ChatTurn;
  struct ChatCall;
  class ChunkWriter;
  Task<std::unique_ptr<ChatCall>> PrepareChat(Exchange x);
  Task<std::optional<ChatOutcome>> ReplayChat(const ChatTurn& turn, Status refused);
  Task<bool> KeyUsed(const std::string& id, const std::string& key);
  Task<std::optional<ApiError>> FindChatSession(const ServerRequest& req, const ChatRequest& chat,
                                                std::string tenant, ChatTurn* turn);
  // `turn` and `tenant` are the caller's (ChatCompletions' call, its exchange), which
  // outlive these: taken by value, each would also be a temporary in the caller's frame.
  Task<void> AnswerChat(ServerResponse& res, const ChatRequest& chat, ChatTurn& turn, const std::string& tenant);
  // AnswerChat on a held response (ServerResponse::Hold), spawned on the connection's
  // executor: what waits with the turn is this frame and AnswerChat's.
  Task<void> AnswerHeldChat(std::shared_ptr<ServerResponse> held, std::unique_ptr<ChatCall> call, std::string tenant);
  Task<void> SendChatOutcome(ServerResponse& res, const ChatRequest& chat, const std::string& id, std::string tenant,
                             ChatOutcome outcome, Headers headers);
  Task<void> StreamChat(ServerResponse& res, const ChatRequest& chat, ChatTurn& turn, const std::string& tenant,
                        std::shared_ptr<void> slot);
  Task<void> EndChatStream(ServerResponse& res, const ChatRequest& chat, const std::string& tenant,
                           const std::string& id, ChunkWriter& writer, const Result<TurnResult>& ran,
                           std::optional<ChatOutcome> replayed);
  Task<Status> LinkConversation(std::string tenant, std::string digest, std::string session_id);
  Task<void> AskAgain(ServerResponse& res, const ChatRequest& chat, const std::string& id, const std::string& tenant,
                      std::string text, const Json& clarification, const Json& approval);
  // A place among the tenant's heavy reads (trace, timeline, session list), held until the response is
  // written; nullopt when the tenant has --max-trace-reads already.
  std::optional<std::shared_ptr<void>> TakeReadSlot(const std::string& tenant);
  Task<Result<TracePage>> ReadPage(std::string id, TurnRange range, TraceForm form);
  Task<void> SendTrace(Exchange x, TraceForm form);
  Task<void> StreamTrace(ServerResponse& res, std::string id, TraceForm form);
};

}  // namespace reins

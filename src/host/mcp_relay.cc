#include "host/mcp_relay.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "mcp/elicitation.h"
#include "pipeline/store_calls.h"

namespace reins {

namespace asio = boost::asio;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

// The relay's own thread runs the holder's side (polling, resuming calls); its store
// calls run on StoreCalls' threads, so a slow database delays only the relay.
constexpr int kStoreThreads = 2;
// How often each replica deletes mail and marks that replicas which died left behind.
constexpr int64_t kSweepEveryMs = 60 * 1000;

std::string NewReplicaName() {
  std::random_device seed;
  std::mt19937_64 bits(seed());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "mcp_";
  for (int i = 0; i < 12; ++i) name += kHex[bits() % 16];
  return name;
}

// A call that came back asking the person (and stays open on its server).
bool Asks(const Result<Json>& result) {
  if (!result.ok() || !result->is_object()) return false;
  const Json& c = result->value("clarification", Json());
  return result->value("next_action", "") == "clarification_needed" && c.is_object() &&
         c.value("type", "") == kElicitationClarificationType;
}

Json ResultToMail(const Result<Json>& r) {
  if (r.ok()) return {{"ok", true}, {"value", *r}};
  return {{"ok", false}, {"code", std::string(StatusCodeName(r.status().code()))}, {"message", r.status().message()}};
}

Result<Json> ResultFromMail(const Json& mail) {
  if (mail.value("ok", false)) return mail.value("value", Json());
  const std::string name = mail.value("code", "");
  StatusCode code = StatusCode::kInternal;
  for (int c = static_cast<int>(StatusCode::kInvalidArgument); c <= static_cast<int>(StatusCode::kAborted); ++c) {
    if (StatusCodeName(static_cast<StatusCode>(c)) == name) code = static_cast<StatusCode>(c);
  }
  return Status(code, mail.value("message", "the replica holding the call sent an unreadable reply"));
}

int64_t MsSince(SteadyTime start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

// Waits `ms` on the caller's executor; false when the caller was cancelled.
Task<bool> Pause(int ms) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_after(std::chrono::milliseconds(ms));
  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return !ec;
}

}  // namespace

struct McpRelay::Loop {
  explicit Loop(Store& store) : calls(std::make_unique<StoreCalls>(store, kStoreThreads)) {}
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::unique_ptr<StoreCalls> calls;  // reset by Stop(), which waits for its threads
  std::thread thread;
};

class McpRelay::Backend final : public ToolBackend {
 public:
  Backend(McpRelay& relay, std::string tool, std::shared_ptr<ToolBackend> inner)
      : relay_(relay), tool_(std::move(tool)), inner_(std::move(inner)) {}

  Task<Result<Json>> Invoke(const ToolRequest& request) override {
    if (!request.answer.is_null()) {
      Task<Result<QuestionMark>> read = relay_.Holder(request.session_id);
      Result<QuestionMark> holder = co_await std::move(read);
      // (Unreadable: this replica's own desk answers, honestly, whether it holds it.)
      if (holder.ok() && !holder->replica.empty() && holder->replica != relay_.replica_) {
        QuestionMark mark = *holder;
        ToolRequest relayed = request;
        relayed.tool = tool_;
        Task<Result<Json>> task = relay_.Relay(std::move(mark), std::move(relayed));
        Result<Json> result = co_await std::move(task);
        co_return result;
      }
    }
    Result<Json> result = co_await inner_->Invoke(request);
    co_await relay_.Held(tool_, request.session_id, result);
    co_return result;
  }

  void Withdraw(const std::string& session_id) override {
    inner_->Withdraw(session_id);  // held here: let go now
    relay_.Withdraw(tool_, session_id);
  }

  bool ResumesQuestions() const override { return inner_->ResumesQuestions(); }
  bool ForwardsTraceContext() const override { return inner_->ForwardsTraceContext(); }

 private:
  McpRelay& relay_;
  std::string tool_;
  std::shared_ptr<ToolBackend> inner_;
};

McpRelay::McpRelay(std::shared_ptr<Store> store, std::shared_ptr<Clock> clock, McpRelayOptions options)
    : store_(std::move(store)), clock_(std::move(clock)), options_(options), replica_(NewReplicaName()),
      loop_(std::make_unique<Loop>(*store_)) {
  asio::co_spawn(loop_->io, Poll(), asio::detached);
  loop_->thread = std::thread([io = &loop_->io] { io->run(); });
}

McpRelay::~McpRelay() { Stop(); }

void McpRelay::Stop() {
  loop_->io.stop();
  if (loop_->thread.joinable()) loop_->thread.join();
  loop_->calls.reset();  // its threads' last posts land while their executors still exist
}

std::shared_ptr<ToolBackend> McpRelay::Wrap(const std::string& tool, std::shared_ptr<ToolBackend> inner) {
  std::lock_guard lock(mu_);
  inner_[tool] = inner;
  return std::make_shared<Backend>(*this, tool, std::move(inner));
}

std::shared_ptr<ToolBackend> McpRelay::Inner(const std::string& tool) {
  std::lock_guard lock(mu_);
  auto it = inner_.find(tool);
  return it == inner_.end() ? nullptr : it->second;
}

// After a call made here: a question marks the session as held here (a question held
// elsewhere is superseded: its holder is told to let go); the end of a call that had
// asked removes the mark. (A mark that cannot be written leaves the question
// answerable on this replica only; elsewhere the answer is refused, honestly.)
Task<void> McpRelay::Held(const std::string& tool, const std::string& session_id, const Result<Json>& result) {
  const bool asks = Asks(result);
  const int64_t now = clock_->NowMs();
  {
    std::lock_guard lock(mu_);
    if (asks) {
      held_[session_id] = now;
    } else if (held_.erase(session_id) == 0) {
      co_return;  // nothing was held: nothing to unmark
    }
  }
  if (!asks) {
    Task<void> unmark = Unmark(session_id, replica_);
    co_await std::move(unmark);
    co_return;
  }
  std::function<Result<QuestionMark>(Store&)> mark = [session_id, me = replica_, now](Store& s) {
    return s.MarkQuestion(session_id, QuestionMark{me, now});
  };
  Result<QuestionMark> before = co_await loop_->calls->Run(std::move(mark));
  if (before.ok() && !before->replica.empty() && before->replica != replica_) {
    QuestionMark superseded = *before;
    Task<void> told = TellToWithdraw(std::move(superseded), tool, session_id);
    co_await std::move(told);
  }
}

Task<Result<QuestionMark>> McpRelay::Holder(std::string session_id) {
  std::function<Result<QuestionMark>(Store&)> read = [session_id](Store& s) { return s.QuestionHolder(session_id); };
  Result<QuestionMark> holder = co_await loop_->calls->Run(std::move(read));
  co_return holder;
}

Task<void> McpRelay::Unmark(std::string session_id, std::string replica) {
  std::function<Status(Store&)> unmark = [session_id, replica](Store& s) { return s.UnmarkQuestion(session_id, replica); };
  Status unmarked = co_await loop_->calls->Run(std::move(unmark));
  (void)unmarked;  // left behind: swept, or replaced by the session's next question
}

// The answer goes to the holder as mail and this turn waits for the reply. A turn
// cancelled meanwhile (its time ran out) still settles its mail before it returns.
Task<Result<Json>> McpRelay::Relay(QuestionMark holder, ToolRequest request) {
  int64_t id = 0;
  bool abandon = false;
  std::optional<Result<Json>> result;
  try {
    Task<Result<Json>> exchange = Exchange(holder, request, &id, &abandon);
    result = co_await std::move(exchange);
  } catch (const std::exception&) {
    abandon = true;  // cancelled at a co_await (asio throws operation_aborted there)
  }
  if (!abandon) co_return std::move(*result);
  // A cancelled coroutine throws at its next co_await unless its state is reset.
  co_await asio::this_coro::reset_cancellation_state();
  if (id != 0) {
    Task<void> abandoned = Abandon(holder, request, id);
    co_await std::move(abandoned);
  }
  if (result) co_return std::move(*result);
  co_return Aborted("the call to " + request.tool + " was cancelled");
}

Task<Result<Json>> McpRelay::Exchange(const QuestionMark& holder, const ToolRequest& request, int64_t* id, bool* abandon) {
  const SteadyTime start = std::chrono::steady_clock::now();
  Json body = {{"kind", "answer"},     {"tool", request.tool},     {"session_id", request.session_id},
               {"args", request.args}, {"answer", request.answer}, {"timeout_ms", request.timeout_ms}};
  std::function<Result<int64_t>(Store&)> send = [to = holder.replica, body, now = clock_->NowMs()](Store& s) {
    return s.SendMail(to, body, now);
  };
  Result<int64_t> sent = co_await loop_->calls->Run(std::move(send));
  if (!sent.ok()) {
    co_return Unavailable("the answer could not be passed to replica " + holder.replica +
                          ", which holds the question: " + sent.status().message());
  }
  *id = *sent;
  // The holder gets take_within_ms to take the answer, less when the call's own time is
  // shorter: the person then hears why, not only that the call timed out.
  const int64_t take_within = std::max<int64_t>(2 * options_.poll_ms,
                                                std::min<int64_t>(options_.take_within_ms, request.timeout_ms - 500));
  const int64_t reply_within = take_within + request.timeout_ms + 1000;
  for (;;) {
    const bool waited = co_await Pause(options_.poll_ms);
    if (!waited) {
      *abandon = true;
      co_return Aborted("the call to " + request.tool + " was cancelled");
    }
    std::function<Result<MailState>(Store&)> collect = [mail = *id](Store& s) { return s.CollectMail(mail); };
    Result<MailState> state = co_await loop_->calls->Run(std::move(collect));
    if (state.ok() && state->stage == MailState::Stage::kReplied) {
      *id = 0;  // collected, and gone
      co_return ResultFromMail(state->reply);
    }
    if (state.ok() && state->stage == MailState::Stage::kGone) {
      *id = 0;
      co_return Aborted("the answer to the question replica " + holder.replica + " holds was discarded");
    }
    const bool unread = state.ok() && state->stage == MailState::Stage::kUnread;
    if (unread && MsSince(start) > take_within) {
      std::function<Result<bool>(Store&)> withdraw = [mail = *id](Store& s) { return s.WithdrawMail(mail); };
      Result<bool> withdrawn = co_await loop_->calls->Run(std::move(withdraw));
      if (!withdrawn.ok() || !*withdrawn) continue;  // taken just now: its reply follows
      // Never seen by its holder: the question goes with it. A holder that is only
      // slow hears it when it reads its mail again (a dead one's mail is swept).
      *id = 0;
      Task<void> unmark = Unmark(request.session_id, holder.replica);
      co_await std::move(unmark);
      Task<void> told = TellToWithdraw(holder, request.tool, request.session_id);
      co_await std::move(told);
      co_return FailedPrecondition("the question was withdrawn: replica " + holder.replica +
                                   ", where the call that asked it is open, did not take the answer within " +
                                   std::to_string(take_within) +
                                   " ms (it stopped, or cannot reach the database); ask again");
    }
    if (MsSince(start) > reply_within) {
      *abandon = true;
      co_return DeadlineExceeded("replica " + holder.replica + " took the answer but sent no result of " + request.tool +
                                 " within " + std::to_string(reply_within) + " ms");
    }
  }
}

// The answer is no longer awaited: withdrawn if still unread, else discarded (its reply
// will find nobody), and the holder told to let its call go.
Task<void> McpRelay::Abandon(const QuestionMark& holder, const ToolRequest& request, int64_t id) {
  std::function<Status(Store&)> drop = [id](Store& s) {
    if (Result<bool> withdrawn = s.WithdrawMail(id); withdrawn.ok() && *withdrawn) return OkStatus();
    return s.DiscardMail(id);
  };
  Status dropped = co_await loop_->calls->Run(std::move(drop));
  (void)dropped;  // left behind: swept
  QuestionMark mark = holder;
  Task<void> told = TellToWithdraw(std::move(mark), request.tool, request.session_id);
  co_await std::move(told);
}

// The person withdrew the session's question (it moved on): held here, the mark goes;
// held by another replica, that replica is told.
void McpRelay::Withdraw(const std::string& tool, const std::string& session_id) {
  bool held_here = false;
  {
    std::lock_guard lock(mu_);
    held_here = held_.erase(session_id) > 0;
  }
  auto settle = [this, tool, session_id, held_here]() -> Task<void> {
    if (held_here) {
      Task<void> unmark = Unmark(session_id, replica_);
      co_await std::move(unmark);
      co_return;
    }
    Task<Result<QuestionMark>> read = Holder(session_id);
    Result<QuestionMark> holder = co_await std::move(read);
    if (!holder.ok() || holder->replica.empty() || holder->replica == replica_) co_return;
    QuestionMark mark = *holder;
    Task<void> told = TellToWithdraw(std::move(mark), tool, session_id);
    co_await std::move(told);
  };
  asio::co_spawn(loop_->io, settle, asio::detached);
}

Task<void> McpRelay::TellToWithdraw(QuestionMark holder, std::string tool, std::string session_id) {
  Json body = {{"kind", "withdraw"}, {"tool", tool}, {"session_id", session_id}, {"asked_at", holder.asked_at_ms}};
  std::function<Result<int64_t>(Store&)> send = [to = holder.replica, body, now = clock_->NowMs()](Store& s) {
    return s.SendMail(to, body, now);
  };
  Result<int64_t> sent = co_await loop_->calls->Run(std::move(send));
  (void)sent;  // not delivered: the holder's question lapses at its time to live
}

// The holder's side: while this replica holds a question, its mail is read every
// poll_ms; marks older than a question may live are dropped.
Task<void> McpRelay::Poll() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  SteadyTime swept = std::chrono::steady_clock::now();
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(options_.poll_ms));
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    if (MsSince(swept) > kSweepEveryMs) {
      swept = std::chrono::steady_clock::now();
      std::function<Status(Store&)> sweep = [before = clock_->NowMs() - 2 * options_.mark_ttl_ms](Store& s) {
        return s.SweepMail(before);
      };
      Status sweeped = co_await loop_->calls->Run(std::move(sweep));
      (void)sweeped;  // next minute
    }
    std::vector<std::string> lapsed;
    bool holding = false;
    {
      std::lock_guard lock(mu_);
      const int64_t now = clock_->NowMs();
      for (auto it = held_.begin(); it != held_.end();) {
        if (now - it->second <= options_.mark_ttl_ms) {
          ++it;
          continue;
        }
        lapsed.push_back(it->first);
        it = held_.erase(it);
      }
      holding = !held_.empty();
    }
    for (const std::string& session : lapsed) {
      Task<void> unmark = Unmark(session, replica_);
      co_await std::move(unmark);
    }
    if (!holding) continue;
    std::function<Result<std::vector<ReplicaMail>>(Store&)> take = [me = replica_](Store& s) { return s.TakeMail(me); };
    Result<std::vector<ReplicaMail>> mail = co_await loop_->calls->Run(std::move(take));
    if (!mail.ok()) continue;  // the database is away: try again next round
    std::vector<ReplicaMail> taken = std::move(mail).value();
    for (ReplicaMail& m : taken) asio::co_spawn(loop_->io, Serve(std::move(m)), asio::detached);
  }
}

Task<void> McpRelay::Serve(ReplicaMail mail) {
  const Json& body = mail.body;
  const std::string session = body.value("session_id", "");
  const int64_t id = mail.id;
  std::shared_ptr<ToolBackend> inner = Inner(body.value("tool", ""));
  if (body.value("kind", "") == "withdraw") {
    // Only the question the sender saw: a newer one asked here since stays open.
    bool current = false;
    {
      std::lock_guard lock(mu_);
      auto it = held_.find(session);
      current = it != held_.end() && it->second == body.value("asked_at", int64_t{0});
      if (current) held_.erase(it);
    }
    if (current && inner) inner->Withdraw(session);
    std::function<Status(Store&)> settle = [id, session, me = replica_, current](Store& s) {
      (void)s.DiscardMail(id);  // nobody waits for a reply
      return current ? s.UnmarkQuestion(session, me) : OkStatus();
    };
    Status settled = co_await loop_->calls->Run(std::move(settle));
    (void)settled;
    co_return;
  }
  Result<Json> result = NotFound("tool " + body.value("tool", "") + " is not an MCP tool of replica " + replica_);
  if (inner) {
    ToolRequest request;
    request.tool = body.value("tool", "");
    request.args = body.value("args", Json::object());
    request.session_id = session;
    request.may_ask = true;
    request.answer = body.value("answer", Json());
    request.timeout_ms = body.value("timeout_ms", int64_t{30000});
    result = co_await inner->Invoke(request);
    co_await Held(request.tool, session, result);
  }
  std::function<Status(Store&)> reply = [id, answer = ResultToMail(result)](Store& s) { return s.ReplyMail(id, answer); };
  Status replied = co_await loop_->calls->Run(std::move(reply));
  if (replied.ok() || !Asks(result)) co_return;
  // Its sender stopped waiting: nobody will show the call's next question, so the call
  // lets go instead of waiting out its time to live.
  if (inner) inner->Withdraw(session);
  {
    std::lock_guard lock(mu_);
    held_.erase(session);
  }
  Task<void> unmark = Unmark(session, replica_);
  co_await std::move(unmark);
}

}  // namespace reins

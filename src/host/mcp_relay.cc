#include "host/mcp_relay.h"

#include <chrono>
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
  explicit Loop(Store& store) : calls(store, kStoreThreads) {}
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  StoreCalls calls;
  std::thread thread;
};

class McpRelay::Backend final : public ToolBackend {
 public:
  Backend(McpRelay& relay, std::string tool, std::shared_ptr<ToolBackend> inner)
      : relay_(relay), tool_(std::move(tool)), inner_(std::move(inner)) {}

  Task<Result<Json>> Invoke(const ToolRequest& request) override {
    if (!request.answer.is_null()) {
      const std::string session = request.session_id;
      std::function<Result<std::string>(Store&)> read = [session](Store& s) { return s.QuestionHolder(session); };
      Result<std::string> holder = co_await relay_.loop_->calls.Run(std::move(read));
      // (Unreadable: this replica's own desk answers, honestly, whether it holds it.)
      if (holder.ok() && !holder->empty() && *holder != relay_.replica_) {
        std::string to = *holder;
        ToolRequest relayed = request;
        relayed.tool = tool_;
        Task<Result<Json>> task = relay_.Relay(std::move(to), std::move(relayed));
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
  {
    std::lock_guard lock(mu_);
    if (asks) {
      held_[session_id] = clock_->NowMs();
    } else if (held_.erase(session_id) == 0) {
      co_return;  // nothing was held: nothing to unmark
    }
  }
  if (!asks) {
    std::function<Status(Store&)> unmark = [session_id, me = replica_](Store& s) { return s.UnmarkQuestion(session_id, me); };
    Status unmarked = co_await loop_->calls.Run(std::move(unmark));
    (void)unmarked;
    co_return;
  }
  std::function<Result<std::string>(Store&)> mark = [session_id, me = replica_, now = clock_->NowMs()](Store& s) {
    return s.MarkQuestion(session_id, me, now);
  };
  Result<std::string> before = co_await loop_->calls.Run(std::move(mark));
  if (before.ok() && !before->empty() && *before != replica_) {
    std::string to = *before;
    Task<void> told = TellToWithdraw(std::move(to), tool, session_id);
    co_await std::move(told);
  }
}

// The answer goes to `holder` as mail; this turn waits for the reply.
Task<Result<Json>> McpRelay::Relay(std::string holder, ToolRequest request) {
  const SteadyTime start = std::chrono::steady_clock::now();
  Json body = {{"kind", "answer"},       {"tool", request.tool},     {"session_id", request.session_id},
               {"args", request.args},   {"answer", request.answer}, {"timeout_ms", request.timeout_ms}};
  std::function<Result<int64_t>(Store&)> send = [holder, body, now = clock_->NowMs()](Store& s) {
    return s.SendMail(holder, body, now);
  };
  Result<int64_t> sent = co_await loop_->calls.Run(std::move(send));
  if (!sent.ok()) {
    co_return Unavailable("the answer could not be passed to replica " + holder + ", which holds the question: " +
                          sent.status().message());
  }
  const int64_t id = *sent;
  const int64_t reply_within = options_.take_within_ms + request.timeout_ms + 1000;
  for (;;) {
    const bool waited = co_await Pause(options_.poll_ms);
    std::function<Result<MailState>(Store&)> collect = [id](Store& s) { return s.CollectMail(id); };
    Result<MailState> state = co_await loop_->calls.Run(std::move(collect));
    if (state.ok() && state->stage == MailState::Stage::kReplied) co_return ResultFromMail(state->reply);
    if (state.ok() && state->stage == MailState::Stage::kGone) {
      co_return Aborted("the answer to the question replica " + holder + " holds was withdrawn");
    }
    const bool unread = state.ok() && state->stage == MailState::Stage::kUnread;
    const bool late = unread ? MsSince(start) > options_.take_within_ms : MsSince(start) > reply_within;
    if (waited && !late) continue;
    // A cancelled coroutine throws at its next co_await unless its state is reset.
    if (!waited) co_await asio::this_coro::reset_cancellation_state();
    std::function<Result<bool>(Store&)> withdraw = [id](Store& s) { return s.WithdrawMail(id); };
    Result<bool> withdrawn = co_await loop_->calls.Run(std::move(withdraw));
    if (!waited) co_return Aborted("the call to " + request.tool + " was cancelled");
    if (withdrawn.ok() && *withdrawn) {
      // Never seen by its holder: the question is gone with it.
      std::function<Status(Store&)> unmark = [session = request.session_id, holder](Store& s) {
        return s.UnmarkQuestion(session, holder);
      };
      Status unmarked = co_await loop_->calls.Run(std::move(unmark));
      (void)unmarked;
      co_return FailedPrecondition("the question was withdrawn: replica " + holder +
                                   ", where the call that asked it is open, did not take the answer within " +
                                   std::to_string(options_.take_within_ms) +
                                   " ms (it stopped, or cannot reach the database); ask again");
    }
    if (withdrawn.ok() && !*withdrawn && unread) continue;  // taken just now: wait for its reply
    co_return DeadlineExceeded("replica " + holder + " took the answer but sent no result of " + request.tool +
                               " within " + std::to_string(reply_within) + " ms");
  }
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
      std::function<Status(Store&)> unmark = [session_id, me = replica_](Store& s) { return s.UnmarkQuestion(session_id, me); };
      Status unmarked = co_await loop_->calls.Run(std::move(unmark));
      (void)unmarked;
      co_return;
    }
    std::function<Result<std::string>(Store&)> read = [session_id](Store& s) { return s.QuestionHolder(session_id); };
    Result<std::string> holder = co_await loop_->calls.Run(std::move(read));
    if (!holder.ok() || holder->empty() || *holder == replica_) co_return;
    std::string to = *holder;
    Task<void> told = TellToWithdraw(std::move(to), tool, session_id);
    co_await std::move(told);
  };
  asio::co_spawn(loop_->io, settle, asio::detached);
}

Task<void> McpRelay::TellToWithdraw(std::string holder, std::string tool, std::string session_id) {
  Json body = {{"kind", "withdraw"}, {"tool", tool}, {"session_id", session_id}};
  std::function<Result<int64_t>(Store&)> send = [holder, body, now = clock_->NowMs()](Store& s) {
    return s.SendMail(holder, body, now);
  };
  Result<int64_t> sent = co_await loop_->calls.Run(std::move(send));
  (void)sent;  // not delivered: the holder's question lapses at its time to live
}

// The holder's side: while this replica holds a question, its mail is read every
// poll_ms; marks older than a question may live are dropped.
Task<void> McpRelay::Poll() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(options_.poll_ms));
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
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
      std::function<Status(Store&)> unmark = [session, me = replica_](Store& s) { return s.UnmarkQuestion(session, me); };
      Status unmarked = co_await loop_->calls.Run(std::move(unmark));
      (void)unmarked;
    }
    if (!holding) continue;
    std::function<Result<std::vector<ReplicaMail>>(Store&)> take = [me = replica_](Store& s) { return s.TakeMail(me); };
    Result<std::vector<ReplicaMail>> mail = co_await loop_->calls.Run(std::move(take));
    if (!mail.ok()) continue;  // the database is away: try again next round
    std::vector<ReplicaMail> taken = std::move(mail).value();
    for (ReplicaMail& m : taken) asio::co_spawn(loop_->io, Serve(std::move(m)), asio::detached);
  }
}

Task<void> McpRelay::Serve(ReplicaMail mail) {
  const Json& body = mail.body;
  const std::string session = body.value("session_id", "");
  std::shared_ptr<ToolBackend> inner = Inner(body.value("tool", ""));
  if (body.value("kind", "") == "withdraw") {
    if (inner) inner->Withdraw(session);
    {
      std::lock_guard lock(mu_);
      held_.erase(session);
    }
    const int64_t id = mail.id;
    std::function<Status(Store&)> settle = [id, session, me = replica_](Store& s) {
      (void)s.WithdrawMail(id);  // nobody waits for a reply
      return s.UnmarkQuestion(session, me);
    };
    Status settled = co_await loop_->calls.Run(std::move(settle));
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
  const int64_t id = mail.id;
  std::function<Status(Store&)> reply = [id, answer = ResultToMail(result)](Store& s) { return s.ReplyMail(id, answer); };
  Status replied = co_await loop_->calls.Run(std::move(reply));
  (void)replied;  // withdrawn meanwhile: its sender gave up waiting
}

}  // namespace reins

#include "pipeline/model_loop.h"

#include <utility>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include "pipeline/context_window.h"
#include "pipeline/event_text.h"
#include "telemetry/turn_spans.h"

namespace reins {
namespace {

using namespace boost::asio::experimental::awaitable_operators;

Json CallsToJson(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (const ToolCall& c : calls) out.push_back(JsonObject("id", c.id, "name", c.name, "arguments", c.arguments_text));
  return out;
}

}  // namespace

std::shared_ptr<const std::vector<ToolSpec>> ToolSpecsOf(const AgentConfig& config) {
  auto specs = std::make_shared<std::vector<ToolSpec>>();
  for (const ToolDef& t : config.tools) {
    if (t.withheld.empty()) specs->push_back({t.name, t.description, t.input_schema});  // an unpinned MCP tool is not offered
  }
  return specs;
}

ModelLoop::ModelLoop(const AgentConfig& config, const PolicyChain& policies, ModelProvider& model,
                     ModelProvider& audit_model, ChainExecutor& executor)
    : policies_(policies),
      model_(model),
      audit_model_(audit_model),
      model_id_(config.model.model),
      audit_model_id_(config.audit_model ? config.audit_model->model : config.model.model),
      executor_(executor),
      tools_(ToolSpecsOf(config)) {}

std::string_view ModelLoop::ModelId(const ModelProvider& called) const {
  const std::string& id = &called == &audit_model_ ? audit_model_id_ : model_id_;
  return id.empty() ? called.Name() : std::string_view(id);
}

namespace {

// What every request of a turn's call carries besides its messages.
ModelRequest RequestHead(const TurnContext& ctx, Purpose purpose, ToolChoice choice,
                         std::shared_ptr<const std::vector<ToolSpec>> tools) {
  ModelRequest request;
  request.purpose = purpose;
  request.tool_choice = std::move(choice);
  request.turn = ctx.result.turn_number;
  request.user_text = ctx.user_text();
  request.tools = std::move(tools);
  return request;
}

}  // namespace

CallRequest BuildModelRequest(TurnContext& ctx, Purpose purpose, ToolChoice choice,
                              std::shared_ptr<const std::vector<ToolSpec>> tools) {
  CallRequest call(RequestHead(ctx, purpose, std::move(choice), std::move(tools)));
  std::string system = ctx.config.system_prompt;
  for (const std::string& note : ctx.extras().system_notes) system += "\n\n" + note;
  if (!ctx.input.page_context.is_null()) {
    system += "\n\nPage context (what the user is looking at): " + ctx.input.page_context.dump();
  }
  const size_t fixed_chars = system.size() + ContextWindow::kMaxNoteChars;
  // The whole history, as it is: lent to the request rather than copied (CallRequest).
  if (FitsWhole(ctx.history(), ctx.config.max_context_chars, fixed_chars)) {
    ContextWindow whole;
    whole.older_left_out = ctx.older_history_left_out;
    if (std::string note = whole.Note(); !note.empty()) system += "\n\n" + note;
    SessionHistory& history = ctx.session_history();
    call.Borrow(history.Lend(), Message::System(std::move(system)));
    // Earlier turns' messages are written once for all the session's calls (HistoryText).
    if (ctx.history_base > 0) {
      call.request.history_text = &history.Text();
      call.request.history_final = ctx.history_base;
    }
    return call;
  }
  ContextWindow window =
      FitContext(ctx.history(), ctx.history_base, ctx.config.max_context_chars, fixed_chars, ctx.older_history_left_out);
  if (std::string note = window.Note(); !note.empty()) system += "\n\n" + note;
  std::vector<Message>& messages = call.request.messages;
  messages.reserve(window.messages.size() + 1);
  messages.push_back(Message::System(std::move(system)));
  for (Message& m : window.messages) messages.push_back(std::move(m));
  return call;
}

namespace {

// The turn's deadline passed: recorded on the turn, and the call's status says so.
Status TurnTimeout(TurnContext& ctx) {
  ctx.timed_out = true;
  return DeadlineExceeded("the turn took longer than limits.turn_timeout_ms = " + std::to_string(ctx.config.turn_timeout_ms) +
                          " ms");
}

// The call of a provider that does not keep the turn's deadline itself, raced against
// it. A coroutine of its own: the race's locals stay out of the frame of every other
// model call while it waits.
Task<void> WithinDeadline(TurnContext& ctx, ModelProvider& model, const ModelRequest& request,
                          Result<ModelResponse>& answer) {
  auto raced = co_await (model.Complete(request) || ctx.clock.Sleep(request.timeout_ms));
  if (raced.index() == 0) {
    answer = std::move(std::get<0>(raced));
  } else {
    answer = TurnTimeout(ctx);
  }
}

// The call as it is, or raced against the turn's deadline. A plain function that picks
// which to await: `co_await (c ? a : b)` of two coroutine calls crashed on resumption
// with GCC 12.
Task<void> Bounded(TurnContext& ctx, ModelProvider& model, const ModelRequest& request, Result<ModelResponse>& answer) {
  if (ctx.deadline_ms != 0 && !model.KeepsDeadline()) return WithinDeadline(ctx, model, request, answer);
  return model.CompleteInto(request, answer);
}

// What the model answered, in the trace (a function, not part of the coroutine that
// waits: its temporaries would stay in that frame).
void RecordResponse(TurnContext& ctx, const ModelResponse& response) {
  ++ctx.response_index;
  ctx.Emit("model.response", ModelResponseData(ctx.response_index, response));
}

// A call that failed, in the trace. Cut short by the turn's own deadline: that, not the
// provider, is the reason.
void RecordFailure(TurnContext& ctx, Result<ModelResponse>& response) {
  if (ctx.deadline_ms != 0 && ctx.RemainingMs() == 0) response = TurnTimeout(ctx);
  ctx.Emit("model.error", {{"message", response.status().message()}});
}

// How an exchange went, in the trace.
void Record(TurnContext& ctx, Result<ModelResponse>& response) {
  if (!response.ok()) RecordFailure(ctx, response);
  else RecordResponse(ctx, *response);
}

// A call that is not made: its answer is already there.
Task<void> Unsent() { co_return; }

// A streamed reply begins once the writes the turn queued so far are in the store (I12);
// false, `answer` saying why, when they could not be. A coroutine of its own: the
// staging's status is no place in the frame of the call, which waits.
Task<bool> StartStream(TurnContext& ctx, ReplyStream& stream, ModelRequest& request, Result<ModelResponse>& answer) {
  if (ctx.streamed->stage_writes) {
    Status staged = co_await ctx.streamed->stage_writes(ctx);
    if (!staged.ok()) {
      answer = std::move(staged);
      co_return false;
    }
  }
  stream.BeginResponse(false);
  request.on_text_delta = [sentences = &stream](std::string_view text) { sentences->Feed(text); };
  co_return true;
}

// One request to the model, its answer put into `answer` and then recorded by the
// caller (Record). Not a coroutine: the caller awaits the provider's own, and no frame
// of this one is held while the model answers.
Task<void> Exchange(TurnContext& ctx, ModelProvider& model, ModelRequest& request, Result<ModelResponse>& answer) {
  if (ctx.deadline_ms != 0 && ctx.RemainingMs() == 0) {  // no time left to send it
    answer = TurnTimeout(ctx);
    return Unsent();
  }
  // The provider is told its budget; one that keeps it gives up at it (HttpModel aborts
  // the exchange). For any other, the turn stops waiting at the deadline whatever the
  // provider does.
  request.timeout_ms = ctx.deadline_ms != 0 ? ctx.RemainingMs() : 0;
  // The call's own span in the turn's trace (the model.call just emitted is the turn's
  // model_calls-th): a gateway that reads traceparent puts its spans under it.
  const telemetry::TurnIds ids = telemetry::IdsOfTurn(ctx.session_id, ctx.result.turn_number, ctx.input.traceparent);
  request.traceparent = telemetry::FormatTraceparent(
      {ids.turn.trace_id, telemetry::ChatSpanId(ids, ctx.result.model_calls), ids.turn.sampled});
  return Bounded(ctx, model, request, answer);
}

}  // namespace

bool ModelLoop::OutOfTurnTime(const TurnContext& ctx, const Status& call) {
  return ctx.timed_out && call.code() == StatusCode::kDeadlineExceeded;
}

LoopOutcome ModelLoop::Failed(const TurnContext& ctx, const Status& call) {
  // A turn out of time says so plainly; any other failure names the call.
  if (OutOfTurnTime(ctx, call)) {
    return LoopOutcome{LoopOutcome::Kind::kFailed, call.message(), {}, {}, true};
  }
  return LoopOutcome{LoopOutcome::Kind::kFailed, "model call failed: " + call.message(), {}, {}};
}

// Call, CallOnce and CallWith are not coroutines: they record the call and build its
// request when called (their callers await them at once), and the request moves into
// Send's frame. A frame of their own would be held for as long as the model answers.
Task<void> ModelLoop::Call(TurnContext& ctx, Result<ModelResponse>& answer, const ToolChoice& choice) {
  return CallOnce(ctx, answer, ctx.purpose, choice, {}, std::nullopt);
}

Task<void> ModelLoop::CallOnce(TurnContext& ctx, Result<ModelResponse>& answer, Purpose purpose, ToolChoice choice,
                               std::vector<Message> extra, std::optional<Json> schema) {
  const ModelProvider& called = purpose == Purpose::kAudit ? audit_model_ : model_;
  ctx.Emit("model.call", ModelCallData(ModelId(called), purpose, choice, ctx.step_id));
  ++ctx.result.model_calls;
  CallRequest request = BuildModelRequest(ctx, purpose, choice, tools_);
  for (Message& m : extra) request.request.messages.push_back(std::move(m));
  request.request.response_schema = std::move(schema);
  return Send(ctx, std::move(request), answer);
}

Task<void> ModelLoop::CallWith(TurnContext& ctx, Result<ModelResponse>& answer, Purpose purpose, ToolChoice choice,
                               std::vector<Message> messages, std::optional<Json> schema,
                               std::shared_ptr<const std::vector<ToolSpec>> tools) {
  const ModelProvider& called = purpose == Purpose::kAudit ? audit_model_ : model_;
  ctx.Emit("model.call", ModelCallData(ModelId(called), purpose, choice));
  ++ctx.result.model_calls;
  CallRequest request(RequestHead(ctx, purpose, std::move(choice), std::move(tools)));
  request.request.messages = std::move(messages);
  request.request.response_schema = std::move(schema);
  return Send(ctx, std::move(request), answer);
}

namespace {

// Cut off by the token limit, or paused, before any call: the answer is unfinished.
bool Unfinished(const ModelResponse& r) {
  return (r.finish == FinishReason::kLength && r.tool_calls.empty()) || r.finish == FinishReason::kPaused;
}

// A response as the caller gets it: one still unfinished when asked again fails the call;
// one cut off inside a call marks that call unfinished, to be refused (the others stand).
void Settle(Result<ModelResponse>& response) {
  if (!response.ok()) return;
  if (Unfinished(*response)) {
    response = Aborted(response->finish == FinishReason::kPaused
                           ? "the model paused its answer again after it was sent back once"
                           : "the model's answer was cut off by its token limit, also when asked again");
    return;
  }
  if (response->finish == FinishReason::kLength) response->tool_calls.back().cut_off = true;
}

}  // namespace

Task<void> ModelLoop::Send(TurnContext& ctx, CallRequest call, Result<ModelResponse>& answer) {
  ModelRequest& request = call.request;
  request.step_id = ctx.step_id;
  ModelProvider& model = request.purpose == Purpose::kAudit ? audit_model_ : model_;
  // A streamed reply: the chat call's text goes out sentence by sentence as it is
  // written, once the writes the turn queued so far are in the store (I12).
  ReplyStream* stream = request.purpose == Purpose::kChat ? ctx.live_stream() : nullptr;
  // On failure `call` gives the history back as it is destroyed with this frame, which
  // the caller's co_await does before the caller goes on.
  if (stream != nullptr) {
    if (!co_await StartStream(ctx, *stream, request, answer)) co_return;
  }
  co_await Exchange(ctx, model, request, answer);
  Record(ctx, answer);
  if (answer.ok()) {
    if (stream != nullptr) stream->EndResponse(answer->text, Unfinished(*answer));
    if (Unfinished(*answer) && !std::exchange(ctx.cut_off_retried, true)) {
      co_await Repeat(ctx, model, request, stream, answer);
    }
    Settle(answer);
  }
  call.GiveBack();  // the history is the turn's again before its caller goes on
}

// Cut off by the token limit (the same request again) or paused (the conversation back
// with what it said so far, as Anthropic documents): once per turn (I9). A streamed
// reply continues after its last sentence that was sent. A coroutine of its own: what
// it needs stays out of the frame of every model call while it waits.
Task<void> ModelLoop::Repeat(TurnContext& ctx, ModelProvider& model, ModelRequest& request, ReplyStream* stream,
                             Result<ModelResponse>& response) {
  const bool paused = response->finish == FinishReason::kPaused;
  std::string so_far = paused ? response->text : "";
  if (stream != nullptr) {
    so_far = stream->said();
    stream->BeginResponse(true);
  }
  if (!so_far.empty()) request.messages.push_back(Message::Assistant(so_far));
  ctx.Emit("model.call",
           ModelCallData(ModelId(model), request.purpose, request.tool_choice, {}, FinishReasonName(response->finish)));
  ++ctx.result.model_calls;
  co_await Exchange(ctx, model, request, response);
  Record(ctx, response);
  if (!response.ok()) co_return;
  response->text = so_far + response->text;
  if (stream != nullptr) stream->EndResponse(response->text, Unfinished(*response));
}

LoopOutcome ModelLoop::Answer(TurnContext& ctx, const ModelResponse& response) {
  if (response.finish == FinishReason::kRefusal) {
    // The model declined: the person gets a plain sentence, not the model's words
    // dressed as an answer; no tool it proposed runs.
    ctx.Emit("model.refusal", {{"response", ctx.response_index}, {"text", response.text}});
    ctx.Append(Message::Assistant(kRefusalReply));
    return LoopOutcome{LoopOutcome::Kind::kRefusal, kRefusalReply, {}, {}};
  }
  if (response.text.empty()) return LoopOutcome{LoopOutcome::Kind::kFailed, "the model returned an empty reply", {}, {}};
  ctx.Append(Message::Assistant(response.text));
  return LoopOutcome{LoopOutcome::Kind::kReply, response.text, {}, {}};
}

Task<std::optional<LoopOutcome>> ModelLoop::Conclude(TurnContext& ctx, TurnPhaseMachine& phase, ChainOutcome chain) {
  if (chain.stop == ChainStop::kClarification) {
    co_return LoopOutcome{LoopOutcome::Kind::kClarification, chain.clarification->clarification.question,
                          std::move(chain.clarification), {}};
  }
  if (chain.stop == ChainStop::kApproval) {
    co_return LoopOutcome{LoopOutcome::Kind::kApproval, "", {}, std::move(chain.approval)};
  }
  phase.Enter(TurnPhase::kRunningModel);
  if (chain.stop != ChainStop::kComplete) co_return std::nullopt;
  // I1: after `complete`, exactly one more call, with tools off, composes the reply.
  Result<ModelResponse> last = NoAnswer();
  co_await CallOnce(ctx, last, ctx.purpose, ToolChoice::None(), {});
  if (!last.ok()) co_return Failed(ctx, last.status());
  if (!last->tool_calls.empty()) {
    // Tool choice was `none`: calls proposed anyway never run and never enter history.
    ctx.Emit("model.calls_ignored", {{"response", ctx.response_index}, {"tool_calls", CallsToJson(last->tool_calls)},
                                     {"reason", "tool_choice none"}});
  }
  co_return Answer(ctx, *last);
}

Task<std::unique_ptr<LoopOutcome>> ModelLoop::RunCalls(TurnContext& ctx, TurnPhaseMachine& phase,
                                                       std::span<const ToolCall> calls) {
  phase.Enter(TurnPhase::kExecutingTools);
  ChainOutcome chain = co_await executor_.Run(ctx, calls);
  std::optional<LoopOutcome> done = co_await Conclude(ctx, phase, std::move(chain));
  if (!done) co_return nullptr;
  co_return std::make_unique<LoopOutcome>(std::move(*done));
}

std::unique_ptr<LoopOutcome> ModelLoop::Reply(TurnContext& ctx, const ModelResponse& response, int round,
                                             ToolChoice* next) {
  LoopOutcome answer = Answer(ctx, response);
  if (answer.kind != LoopOutcome::Kind::kReply) return std::make_unique<LoopOutcome>(std::move(answer));
  std::optional<std::string> required = policies_.RequiredToolMissing(ctx);
  if (required && round < ctx.config.max_rounds) {
    // One more round, naming the missing tool and forcing the model to call it.
    ctx.Append(Message::User("Before answering, call " + *required +
                             ": this request needs its result. Then answer again."));
    *next = ToolChoice::Named(*required);
    return nullptr;
  }
  return std::make_unique<LoopOutcome>(std::move(answer));
}

Task<std::unique_ptr<LoopOutcome>> ModelLoop::Run(TurnContext& ctx, TurnPhaseMachine& phase, const ToolChoice& first) {
  const int max_rounds = ctx.config.max_rounds;
  ToolChoice choice = first;
  std::unique_ptr<LoopOutcome> done;
  Result<ModelResponse> response = NoAnswer();
  while (ctx.loop_rounds < max_rounds) {
    const int round = ++ctx.loop_rounds;
    co_await Call(ctx, response, choice);
    choice = ToolChoice::Auto();
    if (!response.ok()) co_return std::make_unique<LoopOutcome>(Failed(ctx, response.status()));
    if (response->tool_calls.empty() || response->finish == FinishReason::kRefusal) {
      done = Reply(ctx, *response, round, &choice);
    } else {
      // The calls move into the history once, and run from there (ChainExecutor::Run).
      ctx.Append(Message::Assistant(std::move(response->text), std::move(response->tool_calls)));
      done = co_await RunCalls(ctx, phase, ctx.history().back().tool_calls);
    }
    if (done) co_return std::move(done);
  }
  co_return std::make_unique<LoopOutcome>(LoopOutcome{
      LoopOutcome::Kind::kFailed,
      "the model did not reach an answer within limits.max_rounds = " + std::to_string(max_rounds) + " model calls",
      {}, {}});
}

}  // namespace reins

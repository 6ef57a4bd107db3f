#include "pipeline/turn_pipeline.h"

#include <algorithm>
#include <cctype>

#include "pipeline/event_text.h"
#include "pipeline/reply_text.h"

namespace reins {
namespace {

// Where a streamed reply's own text begins: after the notices sent in front of it.
struct StreamFront {
  size_t notices = 0;
};

}  // namespace

namespace reply_text {

// What the person is told of each write whose outcome is unknown (WriteLedger: an
// earlier try of it was interrupted and it was not run again, or it did not answer in
// time), whatever the model wrote: that it may or may not have happened. Appended to
// `reply` unless it says so already.
std::string WithUncertainWrites(const TurnContext& ctx, std::string reply) {
  for (const ToolOutcome& t : ctx.result.tools) {
    if (t.reason != "uncertain") continue;
    const ToolDef* tool = ctx.FindTool(t.name);
    const std::string title = tool != nullptr && !tool->title.empty() ? tool->title : DefaultToolTitle(t.name);
    // Skipped: an earlier try of the turn was interrupted; executed: it did not answer in time.
    const std::string why = t.status == ToolOutcome::Status::kSkipped ? "it was interrupted while it ran"
                                                                      : "it did not answer in time";
    const std::string note =
        "I can't tell whether the " + title + " went through: " + why + ". Please check before asking for it again.";
    if (reply.find(note) != std::string::npos) continue;
    if (!reply.empty() && !std::isspace(static_cast<unsigned char>(reply.back()))) reply += ' ';
    reply += note;
  }
  return reply;
}

// The turn's live reply stream once it has sent something; null otherwise.
const ReplyStream* SentSome(const TurnContext& ctx) {
  const ReplyStream* stream = ctx.live_stream();
  return stream != nullptr && !stream->sent().empty() ? stream : nullptr;
}

// What a stream sent of the model's own text: without the notices in front of it.
std::string OwnText(TurnContext& ctx, const std::string& sent) {
  return sent.substr(std::min(ctx.Slot<StreamFront>().notices, sent.size()));
}

// This turn's last message is the model's answer to the person (not a call of tools):
// what the person was told is written over it rather than after it.
bool EndsWithAnswer(const TurnContext& ctx) {
  const std::vector<Message>& history = ctx.history();
  return history.size() > ctx.history_base && history.back().role == Role::kAssistant &&
         history.back().tool_calls.empty();
}

void EraseLeadingSpace(std::string& text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
}

}  // namespace reply_text

using namespace reply_text;

PolicyChain::RailFired TurnPipeline::RailsFiredIn(TurnContext& ctx) const {
  return [&ctx](std::string_view rail, const std::string& before, const std::string& after) {
    // Once per rail, even if the audit's rewrite (or an earlier sentence) already named it.
    if (std::find(ctx.result.rails.begin(), ctx.result.rails.end(), rail) == ctx.result.rails.end()) {
      ctx.result.rails.emplace_back(rail);
    }
    ctx.Emit("rail.fired", {{"rail", rail}, {"before", before}, {"after", after}});
  };
}

std::string TurnPipeline::Review(TurnContext& ctx, std::string reply) {
  return policies_.ReviewReply(ctx, std::move(reply), RailsFiredIn(ctx));
}

// A turn whose caller streams gets a reply stream: live when every judge of the reply
// can judge it sentence by sentence, else held, and the first event says which.
Json TurnPipeline::OpenStream(TurnContext& ctx) {
  if (!ctx.streamed || !ctx.streamed->send_reply_text) return nullptr;
  std::string held_by = reply_held_by_;
  Json reply = held_by.empty() ? Json{{"stream", "sentences"}} : Json{{"stream", "whole"}, {"held_by", held_by}};
  ctx.streamed->reply_stream = std::make_unique<ReplyStream>(
      ctx.streamed->send_reply_text,
      [this, &ctx](const std::string& sent, std::string sentence) { return Judge(ctx, sent, std::move(sentence)); },
      [this, &ctx](const std::string& sentence) { return policies_.Waits(ctx, sentence); }, std::move(held_by));
  return reply;
}

std::string TurnPipeline::Judge(TurnContext& ctx, const std::string& sent, std::string sentence) {
  const bool blank = std::all_of(sentence.begin(), sentence.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (blank) return sent.empty() ? "" : sentence;  // line breaks between sentences pass; none lead
  std::string judged = policies_.ReviewSentence(ctx, OwnText(ctx, sent), std::move(sentence), RailsFiredIn(ctx));
  if (judged.empty() || !sent.empty()) return judged;
  // The first sentence out: notices from earlier background failures go in front.
  EraseLeadingSpace(judged);
  const std::string notices = WithNotices(ctx, "", false);
  ctx.Slot<StreamFront>().notices = notices.size();
  return notices + judged;
}

std::string TurnPipeline::Told(TurnContext& ctx, std::string rest) {
  const ReplyStream* stream = SentSome(ctx);
  if (stream == nullptr) return WithNotices(ctx, std::move(rest));
  const std::string& sent = stream->sent();
  EraseLeadingSpace(rest);
  if (rest.empty()) return sent;
  return sent + (std::isspace(static_cast<unsigned char>(sent.back())) ? "" : " ") + rest;
}

// The reply as a whole; for a streamed one, how much of it the person already has.
EventData TurnPipeline::ReplyFinal(const TurnContext& ctx) {
  const ReplyStream* stream = SentSome(ctx);
  return ReplyFinalData(ctx.result.reply, stream != nullptr ? std::optional<size_t>(stream->sent().size()) : std::nullopt);
}

// Notices from earlier background failures go in front of the next reply, once.
std::string TurnPipeline::WithNotices(TurnContext& ctx, std::string reply, bool into_history) {
  if (ctx.extras().pending_notices.empty()) return reply;
  TurnContext::Extras& extras = ctx.extend();
  std::string front;
  for (const auto& [id, text] : extras.pending_notices) {
    front += (front.empty() ? "" : " ") + text;
    ctx.result.notices.push_back(text);
    if (id > 0) extras.delivered_notices.push_back(id);  // 0: the runtime's own (a lapsed approval), not stored
    ctx.Emit("notice", {{"id", id}, {"text", text}});
  }
  extras.pending_notices.clear();
  // The model's history says what the person was told, notices included (a streamed
  // reply's first sentence is not in history yet: it gets them with the rest).
  if (into_history && !ctx.history().empty() && ctx.history().back().role == Role::kAssistant) {
    Message& last = ctx.EditMessage(ctx.history().size() - 1);
    last.text = front + "\n\n" + last.text;
  }
  return front + "\n\n" + reply;
}

void TurnPipeline::Present(TurnContext& ctx, PendingClarification pending, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kAwaitingClarification);
  // The system asks, not the model: the options keep their real ids.
  ctx.Append(Message::Assistant(pending.clarification.question));
  ctx.result.reply = Told(ctx, WithUncertainWrites(ctx, pending.clarification.question));
  Json c = ClarificationToJson(pending.clarification);
  c["id"] = pending.id;
  c["tool"] = pending.tool;
  c["entity_type"] = pending.entity_type;
  ctx.Emit("clarification", std::move(c));
  // A question after streamed text (a preamble): the deltas still add up to the reply.
  if (SentSome(ctx)) ctx.Emit("reply.final", ReplyFinal(ctx));
  ctx.result.clarification = pending;
  ctx.session.pending_clarification = std::move(pending);
}

void TurnPipeline::Deliver(TurnContext& ctx, std::string reply, TurnPhaseMachine& phase) {
  DeliverWhole(ctx, Told(ctx, std::move(reply)), phase);
}

void TurnPipeline::DeliverWhole(TurnContext& ctx, std::string whole, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kDelivering);
  ctx.result.reply = std::move(whole);
  ctx.Emit("reply.final", ReplyFinal(ctx));
  phase.Enter(TurnPhase::kCompleted);
}

void TurnPipeline::Fail(TurnContext& ctx, const std::string& why, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kFailed);
  WithdrawDeferred(ctx, "turn_failed");
  ctx.result.error = why;
  ctx.result.reply = Told(ctx, WithUncertainWrites(ctx, "Sorry, I could not complete that request just now."));
  if (SentSome(ctx)) ctx.Emit("reply.final", ReplyFinal(ctx));
  // What the person was told closes the turn in history too, so the next model call
  // never sees this turn's message as a request still waiting for an answer.
  if (EndsWithAnswer(ctx)) {
    ctx.EditMessage(ctx.history().size() - 1).text = ctx.result.reply;
  } else if (ctx.history().size() > ctx.history_base) {
    ctx.Append(Message::Assistant(ctx.result.reply));
  }
  ctx.Emit("turn.failed", {{"error", why}});
}

}  // namespace reins

#include "policy/act/undone_claims.h"

#include <algorithm>
#include <map>

#include "domain/text.h"
#include "policy/act/reply_reading.h"
#include "policy/act/speech.h"

namespace reins {
namespace {

// Why a call of this turn did not happen; "" when it ran, is queued, or waits (for the
// person's approval, or for their answer to a question: the reply then is the question).
std::string WhyUndone(const ToolOutcome& o) {
  switch (o.status) {
    case ToolOutcome::Status::kExecuted:
      if (!o.result || o.result->success) return "";
      return o.reason == "uncertain" ? "uncertain" : "failed";  // uncertain: it did not answer in time
    case ToolOutcome::Status::kDeferred:
      return "";
    case ToolOutcome::Status::kRejected:
      return o.reason == "denied" ? "denied" : "refused";
    case ToolOutcome::Status::kSkipped:
      if (o.reason == "awaiting_approval" || o.reason == "truncated") return "";
      if (o.reason == "uncertain") return "uncertain";
      if (o.reason == "turn_failed" || o.reason == "refused") return "withdrawn";
      return "skipped";
  }
  return "";
}

// A later call of the same tool that ran makes up for one refused for its form (its
// schema, its JSON, an id: the model repairs it with other arguments), or for one that
// failed or was skipped and then ran with the same arguments; never for one the person
// denied, one outside data steered, or one that may have happened. A send to Maria that
// failed is not made good by a send to David.
bool MadeGood(const std::vector<ToolOutcome>& tools, size_t i, const std::string& why) {
  const ToolOutcome& o = tools[i];
  if (why == "denied" || why == "uncertain" || o.reason == "untrusted_data" || o.reason == "not_allowed") return false;
  const bool form = why == "refused";
  return std::any_of(tools.begin() + static_cast<long>(i) + 1, tools.end(), [&](const ToolOutcome& later) {
    return later.name == o.name && later.SucceededOrQueued() && (form || later.args == o.args);
  });
}

// The words of a call's string arguments long enough to tell calls apart in a sentence
// ("maria", "garcia" of "Maria Garcia: dosage question").
void Values(const Json& j, std::vector<std::string>& out) {
  if (j.is_string()) {
    for (std::string& w : Words(j.get_ref<const std::string&>())) {
      if (w.size() >= 4) out.push_back(std::move(w));
    }
  } else if (j.is_structured()) {
    for (const Json& v : j) Values(v, out);
  }
}

// `sentence` names one of `values` that is not also one of `unless_also_in`.
bool NamesAny(const std::vector<std::string>& sentence, const std::vector<std::string>& values,
              const std::vector<std::string>& unless_also_in) {
  return std::any_of(values.begin(), values.end(), [&](const std::string& v) {
    return std::find(sentence.begin(), sentence.end(), v) != sentence.end() &&
           std::find(unless_also_in.begin(), unless_also_in.end(), v) == unless_also_in.end();
  });
}

// Some sentence of `text` says the tool's action did not happen: a negation, or a word of
// trouble, beside its title or one of the title's longer words.
bool SaysNotDone(const ToolDef& tool, std::string_view text) {
  std::vector<std::string> about;
  for (const std::string& w : Words(tool.title)) {
    if (w.size() >= 4) about.push_back(w);
  }
  for (const std::string& sentence : Sentences(text)) {
    const std::vector<std::string> w = Words(sentence);
    const bool negative = std::any_of(w.begin(), w.end(), [](const std::string& x) {
      return speech::IsNegation(x) || speech::OneOf({"unable", "trouble", "failed", "problem", "error"}, x);
    });
    const bool names = std::any_of(w.begin(), w.end(), [&](const std::string& x) {
      return std::find(about.begin(), about.end(), x) != about.end();
    });
    if (negative && names) return true;
  }
  return false;
}

// The sentences a streamed reply did not send, by tool: CloseReply says what was not done.
struct UndoneTurn {
  std::vector<std::string> dropped_tools;
};

}  // namespace

std::string WithoutSentences(std::string_view reply, const std::vector<std::string>& drop) {
  std::string kept;
  for (const std::string& piece : Sentences(reply)) {
    const std::string sentence = speech::Trim(piece);
    if (std::find(drop.begin(), drop.end(), sentence) == drop.end()) kept += piece;
  }
  const size_t a = kept.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  return kept.substr(a, kept.find_last_not_of(" \t\r\n") - a + 1);
}

std::vector<UndoneCall> UndoneCalls(const TurnContext& ctx) {
  std::vector<UndoneCall> out;
  const std::vector<ToolOutcome>& tools = ctx.result.tools;
  for (size_t i = 0; i < tools.size(); ++i) {
    std::string why = WhyUndone(tools[i]);
    if (why.empty() || MadeGood(tools, i, why)) continue;
    const ToolDef* tool = ctx.FindTool(tools[i].name);
    if (tool != nullptr) out.push_back({tool, &tools[i], std::move(why)});
  }
  return out;
}

bool ClaimsUndone(const std::string& sentence, const std::string& tool, const std::vector<CallOf>& undone,
                  const std::vector<CallOf>& done) {
  std::vector<std::string> undone_values, done_values;
  bool about_undone = false, ran = false;
  for (const CallOf& c : undone) {
    if (c.tool != tool) continue;
    about_undone = true;
    Values(c.args, undone_values);
  }
  for (const CallOf& c : done) {
    if (c.tool != tool) continue;
    ran = true;
    Values(c.args, done_values);
  }
  if (!about_undone) return false;
  const std::vector<std::string> words = Words(sentence);
  return !ran || (NamesAny(words, undone_values, done_values) && !NamesAny(words, done_values, undone_values));
}

std::string WithoutClaimsOf(const ActionReader& reader, std::string_view user_text, std::string_view reply,
                            const std::vector<CallOf>& undone, const std::vector<CallOf>& done) {
  std::vector<std::string> drop;
  for (const ActionTalk& talk : reader.Read(user_text, reply)) {
    if (ClaimsUndone(talk.sentence, talk.tool, undone, done)) drop.push_back(talk.sentence);
  }
  return WithoutSentences(reply, drop);
}

UndoneClaims::UndoneClaims(const AgentConfig& config, std::shared_ptr<const ActionReader> reader)
    : config_(config), reader_(ReaderOr(std::move(reader), config)) {}

UndoneClaims::Claimed UndoneClaims::Claims(TurnContext& ctx, const std::vector<UndoneCall>& undone,
                                           std::string_view reply) const {
  std::vector<CallOf> undone_calls, done;
  for (const UndoneCall& u : undone) undone_calls.push_back({u.tool->name, u.outcome->args});
  for (const ToolOutcome& o : ctx.result.tools) {
    if (o.SucceededOrQueued()) done.push_back({o.name, o.args});
  }
  // An earlier turn of the request ran it; its arguments are not at hand.
  for (const std::string& tool : ctx.request_tools) done.push_back({tool, Json()});
  Claimed claims;
  for (const ActionTalk& talk : ReadReply(ctx, *reader_, reply)) {
    if (!ClaimsUndone(talk.sentence, talk.tool, undone_calls, done)) continue;
    claims.sentences.push_back(talk.sentence);
    claims.tools.push_back(talk.tool);
  }
  return claims;
}

std::vector<UndoneCall> UndoneClaims::Of(const std::vector<UndoneCall>& undone, const std::vector<std::string>& tools) {
  std::vector<UndoneCall> out;
  for (const UndoneCall& u : undone) {
    if (std::find(tools.begin(), tools.end(), u.tool->name) != tools.end()) out.push_back(u);
  }
  return out;
}

std::string UndoneClaims::Statement(const std::vector<UndoneCall>& undone, std::string_view reply) const {
  std::string out;
  std::vector<std::string> told;
  for (const UndoneCall& u : undone) {
    if (u.why == "uncertain") continue;  // the runtime's own note says it may have happened
    if (std::find(told.begin(), told.end(), u.tool->name) != told.end()) continue;
    told.push_back(u.tool->name);
    if (SaysNotDone(*u.tool, reply) || SaysNotDone(*u.tool, out)) continue;
    const std::string text = u.why == "denied" ? "The " + u.tool->title + " was not done: it was not approved."
                                               : "I was not able to complete the " + u.tool->title +
                                                     " just now, so it has not been done.";
    out += (out.empty() ? "" : " ") + text;
  }
  return out;
}

bool UndoneClaims::ReviewReply(TurnContext& ctx, std::string& reply) const {
  const std::vector<UndoneCall> undone = UndoneCalls(ctx);
  if (undone.empty()) return false;
  const Claimed claims = Claims(ctx, undone, reply);
  if (claims.sentences.empty()) return false;
  const std::string kept = WithoutSentences(reply, claims.sentences);
  const std::string statement = Statement(Of(undone, claims.tools), kept);
  reply = kept + (kept.empty() || statement.empty() ? "" : " ") + statement;
  return true;
}

bool UndoneClaims::ReviewSentence(TurnContext& ctx, const std::string& /*sent*/, std::string& sentence) const {
  const std::vector<UndoneCall> undone = UndoneCalls(ctx);
  if (undone.empty()) return false;
  const Claimed claims = Claims(ctx, undone, sentence);
  if (claims.sentences.empty()) return false;
  UndoneTurn& turn = ctx.Slot<UndoneTurn>();
  turn.dropped_tools.insert(turn.dropped_tools.end(), claims.tools.begin(), claims.tools.end());
  sentence.clear();
  return true;
}

bool UndoneClaims::CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const {
  const std::vector<UndoneCall> undone = UndoneCalls(ctx);
  if (undone.empty()) return false;
  const std::string statement = Statement(Of(undone, ctx.Slot<UndoneTurn>().dropped_tools), sent + tail);
  if (statement.empty()) return false;
  tail += (sent.empty() && tail.empty() ? "" : " ") + statement;
  return true;
}

}  // namespace reins

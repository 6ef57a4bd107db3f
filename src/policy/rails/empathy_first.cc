#include "policy/rails/empathy_first.h"

#include "policy/act/speech.h"  // Trim: a sentence without its bullets
#include "policy/rails/rail_text.h"

namespace reins {
namespace {

// Seed 000's emotional signals.
constexpr const char* kEmotional =
    R"((?i)\b(pray|prayer|grief|griev|loss|lost|died|dies|death|passed|passing|sick|hospital|cancer|divorce|afraid|)"
    R"(scared|anxious|hurting|struggling|alone|lonely|depressed|overwhelm|crisis|suicid|harm|abuse|bully|bullied|)"
    R"(bullying|help me|worried|terrified|heartbroken|miss (him|her|them)))";

// A sentence that turns to the person: sorrow, recognition, thanks for telling.
constexpr const char* kAcknowledgement =
    R"((?i)\b(sorry|condolences|i hear you|that sounds|sounds (so |really |incredibly )?(hard|difficult|painful|heavy|scary|lonely|frightening|overwhelming)|)"
    R"(must (be|feel)|so hard|so difficult|so painful|heart(s)? (goes|go|breaks|is with)|i can('t| only| not)? ?imagine|)"
    R"(thank you for (sharing|telling|trusting|reaching|letting)|thanks for (sharing|telling|trusting|reaching)|)"
    R"(i understand|you('re| are) not alone|that('s| is) (hard|a lot|heartbreaking|so hard|really hard)|)"
    R"(holding you|here for you|with you in this|what you('re| are) going through|it('s| is) (okay|ok|normal) to))";

// A sentence that reports what was done, will be done, or was found.
constexpr const char* kReports[] = {
    // "I've asked...", "We have submitted...", "I just booked...", "I went ahead and..."
    R"((?i)^\W*(so |okay,? |ok,? |great,? |alright,? )?(i've|i have|we've|we have|i just|we just|i went ahead|i also|i)\s+(\w+ ){0,2}?(\w+ed|sent|made|found|told|put|set|got|gave|passed|shared|taken|done)\b)",
    // "I'll let the team know...", "Let me add...", "I'm going to..."
    R"((?i)^\W*(so |okay,? |ok,? |great,? |alright,? )?(i'll|i will|we'll|we will|let me|i'm going to|i am going to|i'm now|i'm passing|i'm adding|i'm sending))",
    // "Your prayer request has been submitted", "The pastoral team has been notified"
    R"((?i)\b(has|have|had) been \w+(ed|sent|made|told|put|set)\b)",
    R"((?i)^\W*(your|the)\s[\w\s-]{0,40}\b(is|are|was|were) (now |all )?(\w+ed|in|on its way|set|sent|done)\b)",
    // "Here are three groups", "Done!", "Great news", "Good news"
    R"((?i)^\W*(here is|here's|here are|done\b|all set|all done|great news|good news|success|confirmed|according to))",
    // "I was not able to...", "I couldn't save...": a result too, if not the hoped-for one
    R"((?i)^\W*(i|we)('m|'re|\s+was|\s+were|\s+am|\s+are)?\s+(not able|unable|could not|couldn't|can't|cannot)\b)",
    // Seed 000's third pattern: "The prayer team will...", "Someone from the church will..."
    R"((?i)^\W*(the prayer team|someone from|the church|pastor|staff|our team|the team)\b.{0,30}\b(will|has been|have been))",
};

constexpr const char* kDefaultOpeners[] = {
    "I hear you, and what you're going through matters.",
    "Thank you for sharing that with me. That takes real courage.",
    "I'm so sorry you're dealing with this.",
};

std::string FirstSentence(const std::string& reply) {
  for (const std::string& piece : Sentences(reply)) {
    if (std::string sentence = speech::Trim(piece); !sentence.empty()) return sentence;
  }
  return "";
}

std::vector<std::unique_ptr<RE2>> PatternsOr(const Json& config, const char* key, std::initializer_list<const char*> fallback) {
  Json list = config.value(key, Json::array());
  if (list.empty()) {
    for (const char* p : fallback) list.push_back(p);
  }
  return CompilePatterns(list);
}

}  // namespace

EmpathyFirst::EmpathyFirst(const Json& config) {
  emotional_ = PatternsOr(config, "emotional_patterns", {kEmotional});
  acknowledgements_ = PatternsOr(config, "acknowledgement_patterns", {kAcknowledgement});
  Json reports = config.value("result_opener_patterns", Json::array());
  for (const char* p : kReports) reports.push_back(p);
  result_openers_ = CompilePatterns(reports);
  for (const Json& o : config.value("openers", Json::array())) {
    if (o.is_string()) {
      openers_.push_back({nullptr, o.get<std::string>()});
    } else if (o.is_object()) {
      auto re = std::make_unique<RE2>(o.value("match", ""), RE2::Quiet);
      if (re->ok()) openers_.push_back({std::move(re), o.value("text", "")});
    }
  }
  if (openers_.empty()) {
    for (const char* text : kDefaultOpeners) openers_.push_back({nullptr, text});
  }
}

bool EmpathyFirst::Acknowledges(const std::string& sentence) const { return AnyMatches(acknowledgements_, sentence); }

bool EmpathyFirst::ReportsResult(const std::string& sentence) const { return AnyMatches(result_openers_, sentence); }

bool EmpathyFirst::ReviewReply(TurnContext& ctx, std::string& reply) const {
  if (!AnyMatches(emotional_, ctx.user_text())) return false;
  // Only the first sentence counts: a confirmation later in the reply is fine.
  const std::string first = FirstSentence(reply);
  if (first.empty() || Acknowledges(first) || !ReportsResult(first)) return false;
  // An opener written for this kind of message first; otherwise the same message
  // always gets the same one of the general openers.
  for (const Opener& o : openers_) {
    if (o.match != nullptr && RE2::PartialMatch(ctx.user_text(), *o.match)) {
      reply = o.text + " " + reply;
      return true;
    }
  }
  std::vector<const std::string*> general;
  for (const Opener& o : openers_) {
    if (o.match == nullptr) general.push_back(&o.text);
  }
  if (general.empty()) return false;
  reply = *general[StableHash(ctx.user_text()) % general.size()] + " " + reply;
  return true;
}

bool EmpathyFirst::ReviewSentence(TurnContext& ctx, const std::string& sent, std::string& sentence) const {
  if (!speech::Trim(sent).empty()) return false;
  return ReviewReply(ctx, sentence);
}

}  // namespace reins

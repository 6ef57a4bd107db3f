#include "policy/clarify/clarification_answer.h"

namespace reins {
namespace {

// The clarification type of a question a call asked mid-call; the chosen option carries
// the answer (`elicitation`: field, value) and the call's arguments (`resume_args`).
constexpr const char* kQuestionType = "elicitation";

// Only a backend that holds such calls open resumes them: any other tool answering with
// this clarification type is asked again through the model, as usual.
bool ResumesTheCall(const TurnContext& ctx, const PendingClarification& asked, const ClarificationOption& chosen) {
  if (asked.clarification.type != kQuestionType) return false;
  if (ctx.resumes_questions == nullptr || !(*ctx.resumes_questions)(asked.tool)) return false;
  return chosen.metadata.is_object() && chosen.metadata.contains("elicitation") &&
         chosen.metadata["elicitation"].value("field", "") != "";
}

}  // namespace

std::optional<Resumption> ClarificationAnswer::Resume(TurnContext& ctx) const {
  const PendingDecisions& d = ctx.decisions();
  const ClarificationOption* chosen = d.ChosenOption();
  if (chosen == nullptr) return std::nullopt;
  const PendingClarification& asked = *d.answered;
  Resumption r;
  if (!ResumesTheCall(ctx, asked, *chosen)) {
    r.note = "The user chose \"" + chosen->title + "\" (id " + chosen->id + ") in answer to \"" +
             asked.clarification.question + "\". Continue the original request with this choice.";
    return r;
  }
  const Json& answer = chosen->metadata["elicitation"];
  Json args = chosen->metadata.value("resume_args", Json::object());
  r.note = "The user answered \"" + chosen->title + "\" to \"" + asked.clarification.question + "\".";
  r.call = ToolCall{"answered_" + asked.id, asked.tool, args.dump(), args, true};
  r.answer = Json{{answer["field"].get<std::string>(), answer.value("value", Json())}};
  return r;
}

}  // namespace reins

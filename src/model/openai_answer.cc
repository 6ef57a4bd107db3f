#include "model/openai_answer.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <utility>

#include "domain/json_parse.h"
#include "model/wire_common.h"

namespace reins::openai {

ModelResponse Respond(Answer answer, bool structured) {
  ModelResponse response;
  response.text = std::move(answer.content);
  if (!answer.refusal.empty()) {
    // The model declined: its words are kept, but this is no answer to deliver as one.
    if (response.text.empty()) response.text = std::move(answer.refusal);
    response.finish = FinishReason::kRefusal;
  }
  response.tool_calls = std::move(answer.tool_calls);
  if (answer.finish_reason == "length") response.finish = FinishReason::kLength;
  // Filtered with nothing left to say: as good as a refusal.
  if (answer.finish_reason == "content_filter" && response.tool_calls.empty() && response.text.empty()) {
    response.finish = FinishReason::kRefusal;
  }
  response.usage.input_tokens = answer.input_tokens;
  response.usage.output_tokens = answer.output_tokens;
  response.model = std::move(answer.model);
  response.provider_finish = std::move(answer.finish_reason);
  if (structured) response.json = wire::JsonObjectIn(response.text);
  return response;
}

namespace {

// What a value, or a container, is to the answer: where it sits decides what is kept.
enum class Slot {
  kIgnored,  // anything reins does not read, and everything inside it
  kRoot,
  kError,
  kModel,
  kChoices,
  kChoice,  // choices[0]; later choices are ignored
  kMessage,
  kFinishReason,
  kContent,
  kRefusal,
  kToolCalls,
  kToolCall,
  kCallId,
  kFunction,
  kName,
  kArguments,
  kUsage,
  kPromptTokens,
  kCompletionTokens,
};

// The slot of member `key` of an object in slot `object`.
Slot MemberSlot(Slot object, std::string_view key) {
  switch (object) {
    case Slot::kRoot:
      if (key == "error") return Slot::kError;
      if (key == "choices") return Slot::kChoices;
      if (key == "usage") return Slot::kUsage;
      if (key == "model") return Slot::kModel;
      return Slot::kIgnored;
    case Slot::kChoice:
      if (key == "message") return Slot::kMessage;
      if (key == "finish_reason") return Slot::kFinishReason;
      return Slot::kIgnored;
    case Slot::kMessage:
      if (key == "content") return Slot::kContent;
      if (key == "refusal") return Slot::kRefusal;
      if (key == "tool_calls") return Slot::kToolCalls;
      return Slot::kIgnored;
    case Slot::kToolCall:
      if (key == "id") return Slot::kCallId;
      if (key == "function") return Slot::kFunction;
      return Slot::kIgnored;
    case Slot::kFunction:
      if (key == "name") return Slot::kName;
      if (key == "arguments") return Slot::kArguments;
      return Slot::kIgnored;
    case Slot::kUsage:
      if (key == "prompt_tokens") return Slot::kPromptTokens;
      if (key == "completion_tokens") return Slot::kCompletionTokens;
      return Slot::kIgnored;
    default:
      return Slot::kIgnored;
  }
}

// A token count as wire::Int reads it, for the plain integers it is written as (anything
// else goes to the DOM): clamped to an int.
bool ReadCount(std::string_view text, int& out) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string_view::npos) return false;
  int64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  out = static_cast<int>(std::min<int64_t>(n, std::numeric_limits<int>::max()));
  return true;
}

class AnswerReader final : public JsonEvents {
 public:
  explicit AnswerReader(Answer& answer) : answer_(answer) {}

  bool complete() const { return done_ && has_message_; }

  bool Null() override {
    switch (Next()) {
      case Slot::kIgnored:
      case Slot::kError:  // "error": null is no error
      case Slot::kFinishReason:
      case Slot::kModel:
      case Slot::kContent:
      case Slot::kRefusal:
      case Slot::kToolCalls:
        return true;
      default:
        return false;
    }
  }
  bool Bool(bool) override { return Next() == Slot::kIgnored; }
  bool Number(std::string_view text) override {
    switch (Next()) {
      case Slot::kIgnored: return true;
      case Slot::kPromptTokens: return ReadCount(text, answer_.input_tokens);
      case Slot::kCompletionTokens: return ReadCount(text, answer_.output_tokens);
      default: return false;
    }
  }
  bool String(std::string_view value) override {
    switch (Next()) {
      case Slot::kIgnored: return true;
      case Slot::kFinishReason: return Keep(answer_.finish_reason, value);
      case Slot::kModel: return Keep(answer_.model, value);
      case Slot::kContent: return Keep(answer_.content, value);
      case Slot::kRefusal: return Keep(answer_.refusal, value);
      case Slot::kCallId: return Keep(call_id_, value);
      case Slot::kName: return Keep(call_name_, value);
      case Slot::kArguments: return Keep(call_arguments_, value);
      default: return false;
    }
  }
  bool Key(std::string_view key) override {
    Open& object = open_.back();
    member_ = object.slot == Slot::kIgnored ? Slot::kIgnored : MemberSlot(object.slot, key);
    if (member_ == Slot::kIgnored) return true;
    const uint32_t bit = 1u << static_cast<int>(member_);
    if (object.seen & bit) return false;  // a key twice: the DOM keeps the last, and says so
    object.seen |= bit;
    return true;
  }
  bool StartObject() override {
    const Slot slot = Next();
    switch (slot) {
      case Slot::kIgnored:
      case Slot::kRoot:
      case Slot::kChoice:
      case Slot::kFunction:
      case Slot::kUsage:
        break;
      case Slot::kMessage:
        has_message_ = true;
        break;
      case Slot::kToolCall:
        call_id_.clear();
        call_name_.clear();
        call_arguments_.clear();
        break;
      default:
        return false;
    }
    open_.push_back({slot, 0, 0});
    return true;
  }
  bool StartArray() override {
    const Slot slot = Next();
    if (slot != Slot::kIgnored && slot != Slot::kChoices && slot != Slot::kToolCalls) return false;
    open_.push_back({slot, 0, 0});
    return true;
  }
  bool EndObject() override {
    if (open_.back().slot == Slot::kToolCall) {
      answer_.tool_calls.push_back(wire::MakeToolCall(std::move(call_id_), std::move(call_name_), Json(std::move(call_arguments_))));
    }
    return Close();
  }
  bool EndArray() override { return Close(); }

 private:
  struct Open {
    Slot slot;
    uint32_t seen;  // the slots of the members read so far (an object's)
    int items;      // values so far (an array's)
  };

  // The slot of the value that starts now.
  Slot Next() {
    if (open_.empty()) return Slot::kRoot;
    Open& container = open_.back();
    switch (container.slot) {
      case Slot::kChoices: return container.items++ == 0 ? Slot::kChoice : Slot::kIgnored;
      case Slot::kToolCalls: return Slot::kToolCall;
      case Slot::kIgnored: return Slot::kIgnored;
      default: return member_;  // an object reins reads: the slot of the key just read
    }
  }
  static bool Keep(std::string& out, std::string_view value) {
    out.assign(value);
    return true;
  }
  bool Close() {
    open_.pop_back();
    if (open_.empty()) done_ = true;
    return true;
  }

  Answer& answer_;
  std::vector<Open> open_;
  Slot member_ = Slot::kIgnored;
  std::string call_id_;
  std::string call_name_;
  std::string call_arguments_;
  bool has_message_ = false;
  bool done_ = false;
};

}  // namespace

bool ReadUsualAnswer(std::string_view body, Answer& answer) {
  AnswerReader reader(answer);
  return ReadJsonEvents(body, reader) && reader.complete();
}

}  // namespace reins::openai

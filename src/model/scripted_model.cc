#include "model/scripted_model.h"

#include <re2/re2.h>

#include "domain/json_parse.h"

namespace reins {
namespace {

std::string DescribeLastMessage(const ModelRequest& request) {
  if (request.messages.empty()) return "none";
  const Message& m = request.messages.back();
  std::string what = std::string(RoleName(m.role));
  if (m.role == Role::kTool) what += " result of " + m.tool_name;
  std::string text = m.text.substr(0, 60);
  return what + " \"" + text + (m.text.size() > 60 ? "...\"" : "\"");
}

}  // namespace

ScriptedModel::ScriptedModel(const Json& replies) {
  if (!replies.is_array()) return;
  for (const Json& r : replies) {
    replies_.push_back({r.value("when", Json::object()), r, r.value("repeat", false), false});
  }
}

void ScriptedModel::AddTurnReplies(int turn, const Json& replies) {
  std::vector<Reply> front;
  for (const Json& r : replies) {
    Json when = r.value("when", Json::object());
    when["turn"] = turn;
    front.push_back({std::move(when), r, r.value("repeat", false), false});
  }
  replies_.insert(replies_.begin(), front.begin(), front.end());
}

bool ScriptedModel::Matches(const Json& when, const ModelRequest& request) const {
  if (auto it = when.find("turn"); it != when.end() && *it != request.turn) return false;
  if (auto it = when.find("purpose"); it != when.end() && *it != PurposeName(request.purpose)) return false;
  if (auto it = when.find("step"); it != when.end() && *it != request.step_id) return false;
  const Message* last = request.messages.empty() ? nullptr : &request.messages.back();
  if (auto it = when.find("last"); it != when.end()) {
    std::string want = it->get<std::string>();
    if (last == nullptr) return false;
    if (want == "user" && last->role != Role::kUser) return false;
    if (want == "tool" && last->role != Role::kTool) return false;
  }
  const Message* last_tool = nullptr;  // the newest tool result in context, when a key asks
  if (when.contains("after_tool") || when.contains("tool_result_matches")) {
    for (auto m = request.messages.rbegin(); m != request.messages.rend() && last_tool == nullptr; ++m) {
      if (m->role == Role::kTool) last_tool = &*m;
    }
  }
  if (auto it = when.find("after_tool"); it != when.end()) {
    if (last_tool == nullptr || last_tool->tool_name != it->get<std::string>()) return false;
  }
  if (auto it = when.find("tool_result_matches"); it != when.end()) {
    RE2 re(it->get<std::string>(), RE2::Quiet);
    if (last_tool == nullptr || !re.ok() || !RE2::PartialMatch(last_tool->text, re)) return false;
  }
  if (auto it = when.find("user_matches"); it != when.end()) {
    RE2 re(it->get<std::string>(), RE2::Quiet);
    if (!re.ok() || !RE2::PartialMatch(request.user_text, re)) return false;
  }
  return true;
}

ModelResponse ScriptedModel::Render(const Json& body, int call_number) const {
  ModelResponse response;
  response.text = body.value("text", "");
  if (auto it = body.find("tool_calls"); it != body.end() && it->is_array()) {
    int i = 0;
    for (const Json& c : *it) {
      ToolCall call;
      call.name = c.value("name", "");
      call.id = c.contains("id") ? c["id"].get<std::string>()
                                 : "call_" + std::to_string(call_number) + "_" + std::to_string(i);
      if (c.contains("args_raw")) {
        // Literal argument text, to script a model that sends broken JSON.
        call.arguments_text = c["args_raw"].get<std::string>();
        Json parsed = ParseJsonOrDiscarded(call.arguments_text);
        call.args_valid = !parsed.is_discarded();
        if (call.args_valid) call.args = std::move(parsed);
      } else {
        call.args = c.value("args", Json::object());
        call.arguments_text = call.args.dump();
      }
      response.tool_calls.push_back(std::move(call));
      ++i;
    }
  }
  if (auto it = body.find("json"); it != body.end()) {
    response.json = *it;
    response.text = it->dump();
  }
  if (auto it = body.find("finish"); it != body.end() && it->is_string()) {
    // A response that is not a finished answer: cut off, refused or paused.
    for (FinishReason f : {FinishReason::kLength, FinishReason::kRefusal, FinishReason::kPaused}) {
      if (*it == FinishReasonName(f)) response.finish = f;
    }
  }
  if (auto it = body.find("raw"); it != body.end()) {
    response.text = it->get<std::string>();
    Json parsed = ParseJsonOrDiscarded(response.text);
    if (!parsed.is_discarded()) response.json = std::move(parsed);
  }
  return response;
}

std::optional<ModelResponse> ScriptedModel::TryReply(const ModelRequest& request) {
  std::lock_guard lock(mu_);
  int call_number = static_cast<int>(calls_.size()) + 1;
  calls_.push_back({request.turn, request.purpose, request.tool_choice, -1});
  for (size_t i = 0; i < replies_.size(); ++i) {
    Reply& reply = replies_[i];
    if (reply.used && !reply.repeat) continue;
    if (!Matches(reply.when, request)) continue;
    reply.used = true;
    calls_.back().reply = static_cast<int>(i);
    return Render(reply.body, call_number);
  }
  return std::nullopt;
}

std::vector<ToolCall> ScriptedModel::PeekFollowUp(const ModelRequest& request) const {
  std::lock_guard lock(mu_);
  for (const Reply& reply : replies_) {
    if (reply.used || !reply.body.contains("tool_calls")) continue;
    if (auto it = reply.when.find("turn"); it != reply.when.end() && it->get<int>() < request.turn) continue;
    if (Matches(reply.when, request)) continue;  // that one is the answer to this call, not a follow-up
    return Render(reply.body, static_cast<int>(calls_.size()) + 1).tool_calls;
  }
  return {};
}

Task<Result<ModelResponse>> ScriptedModel::Complete(const ModelRequest& request) {
  std::optional<ModelResponse> reply = TryReply(request);
  if (reply) co_return std::move(*reply);
  size_t calls = 0;
  {
    std::lock_guard lock(mu_);
    calls = calls_.size();
  }
  co_return FailedPrecondition("scripted model has no reply for call " + std::to_string(calls) + " (turn " +
                               std::to_string(request.turn) + ", purpose " + std::string(PurposeName(request.purpose)) +
                               ", last message: " + DescribeLastMessage(request) + ")");
}

}  // namespace reins

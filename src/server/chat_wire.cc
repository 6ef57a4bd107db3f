#include "server/chat_wire.h"

#include "domain/json_parse.h"
#include "domain/json_text.h"
#include "domain/text.h"
#include "domain/typed_answer.h"
#include "server/keys.h"

namespace reins {
namespace {

ApiError Bad(std::string message, const char* code = "bad_request") { return ApiError{400, code, std::move(message)}; }

ApiError ClientTools(const std::string& what) {
  return Bad(what + ": this agent owns its tools and runs them under its guards, so a client's tools cannot be " +
                 "governed; send messages only (see docs/openai-endpoint.md)",
             "client_tools_unsupported");
}

// A message's content as text: a string, null, or text parts.
std::optional<ApiError> ReadContent(const Json& content, size_t index, std::string* out) {
  const std::string where = "messages[" + std::to_string(index) + "].content";
  out->clear();
  if (content.is_null()) return std::nullopt;
  if (content.is_string()) {
    *out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return Bad("'" + where + "' must be a string or an array of text parts");
  for (const Json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string()) {
      return Bad("'" + where + "' may hold only text parts ({\"type\":\"text\",\"text\":...}): this agent reads text");
    }
    *out += part["text"].get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> ReadMessages(const Json& messages, std::vector<ChatMessage>* out) {
  if (!messages.is_array() || messages.empty()) return Bad("'messages' must be a non-empty array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return Bad("'" + where + "' must be an object with a 'role'");
    }
    const std::string role = m["role"].get<std::string>();
    if (role == "tool" || role == "function") return ClientTools("'" + where + "' is a " + role + " message");
    if (m.contains("tool_calls") && !m["tool_calls"].is_null() && !m["tool_calls"].empty()) {
      return ClientTools("'" + where + "' carries tool_calls");
    }
    if (role != "system" && role != "developer" && role != "user" && role != "assistant") {
      return Bad("'" + where + ".role' must be system, developer, user or assistant");
    }
    ChatMessage message{role, ""};
    if (auto bad = ReadContent(m.contains("content") ? m["content"] : Json(), i, &message.text)) return bad;
    if (role == "system" || role == "developer") continue;  // the agent owns its prompt
    out->push_back(std::move(message));
  }
  if (out->empty() || out->back().role != "user") return Bad("the last message must be the user's (role \"user\")");
  return std::nullopt;
}

std::optional<ApiError> ReadExtension(const Json& j, ChatRequest* out) {
  if (!j.is_object()) {
    return Bad("'reins' must be an object ({\"select\": ID} or {\"approve\": true|false|{decision, args?, message?, remember?}})");
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "select" && value.is_string()) {
      out->select = value.get<std::string>();
    } else if (key == "approve") {
      Result<ApprovalAnswer> answer = ApprovalAnswerFromJson(value);
      if (!answer.ok()) return Bad("'reins.approve': " + answer.status().message());
      out->approve = std::move(answer).value();
    } else {
      return Bad("'reins." + key + "' is not known (expected select: a string, or approve: true, false or "
                 "{decision, args?, message?, remember?})");
    }
  }
  if (out->select && out->approve) return Bad("'reins' may hold select or approve, not both");
  return std::nullopt;
}

// The question a session has pending (as its state keeps it: {id, clarification, ...}),
// read back through the envelope's reader, which refuses options without ids.
std::optional<Clarification> PendingQuestion(const Json& pending) {
  if (!pending.is_object() || !pending.contains("clarification")) return std::nullopt;
  ResultEnvelope e = NormaliseToolResult(Json{{"next_action", "clarification_needed"}, {"clarification", pending["clarification"]}});
  if (!e.clarification) return std::nullopt;
  return *e.clarification;
}

// A message that drops the question instead of answering it.
bool Cancels(const std::string& text) {
  const std::string t = AsciiLower(TrimmedSpace(text));
  return t == "cancel" || t == "stop" || t == "never mind" || t == "nevermind" || t == "forget it";
}

const char* ErrorType(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 409: return "conflict_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

std::optional<ApiError> ParseChatRequest(std::string_view body, ChatRequest* out) {
  *out = ChatRequest{};
  Result<Json> parsed = ParseJson(body);
  if (!parsed.ok()) return Bad("the body is not valid JSON: " + parsed.status().message());
  const Json& j = *parsed;
  if (!j.is_object()) return Bad("the body must be a JSON object");
  if (!j.contains("model") || !j["model"].is_string()) return Bad("'model' must be a string: the agent's name");
  out->model = j["model"].get<std::string>();
  if (j.contains("tools") && !j["tools"].is_null() && !j["tools"].empty()) return ClientTools("'tools' is not empty");
  if (j.contains("functions") && !j["functions"].is_null() && !j["functions"].empty()) {
    return ClientTools("'functions' is not empty");
  }
  if (j.contains("tool_choice") && !j["tool_choice"].is_null()) {
    const Json& choice = j["tool_choice"];
    if (!choice.is_string() || (choice != "auto" && choice != "none")) {
      return ClientTools("'tool_choice' asks for a client tool");
    }
  }
  if (j.contains("n") && !j["n"].is_null() && j["n"] != 1) return Bad("'n' must be 1: a governed turn has one reply");
  std::vector<ChatMessage> messages;
  if (auto bad = ReadMessages(j.contains("messages") ? j["messages"] : Json(), &messages)) return bad;
  out->last = std::move(messages.back());
  messages.pop_back();
  out->history = std::move(messages);
  if (j.contains("user") && !j["user"].is_null()) {
    if (!j["user"].is_string()) return Bad("'user' must be a string: who is speaking");
    out->user = j["user"].get<std::string>();
    if (out->user.empty() || out->user.size() > 128) return Bad("'user' must be 1 to 128 characters");
  }
  if (j.contains("stream") && !j["stream"].is_null()) {
    if (!j["stream"].is_boolean()) return Bad("'stream' must be true or false");
    out->stream = j["stream"].get<bool>();
  }
  if (j.contains("stream_options") && j["stream_options"].is_object()) {
    out->include_usage = j["stream_options"].value("include_usage", false) == true;
  }
  if (j.contains("reins") && !j["reins"].is_null()) {
    if (auto bad = ReadExtension(j["reins"], out)) return bad;
  }
  if (out->last.text.empty() && !out->select && !out->approve) return Bad("the last message says nothing");
  return std::nullopt;
}

std::string ConversationDigest(const std::string& user, const std::vector<ChatMessage>& messages) {
  Json canonical = Json::array({user});
  for (const ChatMessage& m : messages) canonical.push_back(Json::array({m.role, std::string(TrimmedSpace(m.text))}));
  return Sha256Hex(canonical.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string ReservedKeyRefusal(std::string_view key) {
  if (!key.starts_with(kDerivedKeyPrefix)) return "";
  return "idempotency keys beginning with '" + std::string(kDerivedKeyPrefix) +
         "' are the OpenAI door's own (derived from a conversation); choose another key";
}

ChatAnswer ReadChatAnswer(const ChatRequest& req, const Json& pending_clarification, const Json& pending_approval,
                          std::string key) {
  ChatAnswer out;
  TurnInput& in = out.turn;
  in.speaker = req.user;
  in.idempotency_key = std::move(key);
  if (req.select) {
    in.select = req.select;
    return out;
  }
  if (req.approve) {
    in.approve = req.approve;
    return out;
  }
  if (std::optional<Clarification> pending = PendingQuestion(pending_clarification); pending && !Cancels(req.last.text)) {
    const OptionMatch match = MatchOption(pending->options, req.last.text);
    if (match.kind == OptionMatch::Kind::kOne) {
      in.select = pending->options[match.index].id;
      in.words = req.last.text;
    } else {
      out.ask_again = AskAgain(*pending, match);
      in.say = req.last.text;
    }
    return out;
  }
  if (pending_approval.is_object()) {
    if (std::optional<bool> decision = TypedDecision(req.last.text)) {
      in.approve = *decision;
      in.words = req.last.text;
    } else {
      out.ask_again = "Please answer yes or no. " + pending_approval.value("prompt", std::string("Should I go ahead?"));
      in.say = req.last.text;
    }
    return out;
  }
  in.say = req.last.text;
  return out;
}

std::string AssistantText(const Json& result) {
  std::string text = result.value("reply", "");
  if (text.empty() && result.value("status", "") == "blocked") text = result.value("blocked_reason", "");
  const bool asks = result.value("status", "") == "awaiting_clarification";
  if (const auto c = result.find("clarification"); asks && c != result.end() && c->is_object()) {
    size_t n = 0;
    for (const Json& o : c->value("options", Json::array())) {
      ClarificationOption option{o.value("id", ""), o.value("title", ""), o.value("subtitle", ""), std::nullopt, nullptr};
      text += (text.empty() ? "" : "\n") + std::to_string(++n) + ". " + OptionLine(option);
    }
  }
  return text;
}

ChatUsage UsageOf(const std::vector<TraceEvent>& events) {
  ChatUsage u;
  for (const TraceEvent& e : events) {
    if (e.type != EventType::kModelResponse) continue;
    const std::optional<std::string_view> usage = MemberText(e.data.text(), "usage");  // found, not parsed
    if (!usage) continue;
    u.prompt_tokens += MemberInt(*usage, "input_tokens").value_or(0);
    u.completion_tokens += MemberInt(*usage, "output_tokens").value_or(0);
  }
  return u;
}

Json UsageJson(const ChatUsage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

Json ReinsExtension(const std::string& session_id, const Json& result) {
  Json ext = {{"session_id", session_id}, {"turn_id", result.value("turn_id", "")}, {"status", result.value("status", "")}};
  if (const auto c = result.find("clarification"); c != result.end() && c->is_object()) {
    Json options = Json::array();
    for (const Json& o : c->value("options", Json::array())) {
      Json option = {{"id", o.value("id", "")}, {"title", o.value("title", "")}};
      if (o.contains("subtitle")) option["subtitle"] = o["subtitle"];
      options.push_back(std::move(option));
    }
    ext["clarification"] = {{"id", c->value("id", "")}, {"question", c->value("question", "")}, {"options", options}};
  }
  if (const auto a = result.find("approval"); a != result.end() && a->is_object()) ext["approval"] = *a;
  if (const auto b = result.find("blocked_reason"); b != result.end()) ext["blocked_reason"] = *b;
  return ext;
}

Json CompletionJson(const CompletionHead& head, const std::string& content, const ChatUsage& usage, Json reins) {
  Json message = {{"role", "assistant"}, {"content", content}, {"refusal", nullptr}};
  return {{"id", head.id},
          {"object", "chat.completion"},
          {"created", head.created_s},
          {"model", head.model},
          {"choices", Json::array({{{"index", 0}, {"message", std::move(message)}, {"logprobs", nullptr},
                                    {"finish_reason", "stop"}}})},
          {"usage", UsageJson(usage)},
          {"reins", std::move(reins)}};
}

Json ChunkJson(const CompletionHead& head, Json delta, Json finish_reason, bool include_usage, Json reins) {
  Json chunk = {{"id", head.id},
                {"object", "chat.completion.chunk"},
                {"created", head.created_s},
                {"model", head.model},
                {"choices", Json::array({{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr},
                                          {"finish_reason", std::move(finish_reason)}}})}};
  if (include_usage) chunk["usage"] = nullptr;
  if (!reins.is_null()) chunk["reins"] = std::move(reins);
  return chunk;
}

Json UsageChunkJson(const CompletionHead& head, const ChatUsage& usage) {
  return {{"id", head.id},       {"object", "chat.completion.chunk"}, {"created", head.created_s},
          {"model", head.model}, {"choices", Json::array()},           {"usage", UsageJson(usage)}};
}

Json OpenAiErrorJson(const ApiError& e) {
  return {{"error", {{"message", e.message}, {"type", ErrorType(e.status)}, {"param", nullptr}, {"code", e.code}}}};
}

}  // namespace reins

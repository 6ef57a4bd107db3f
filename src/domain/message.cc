#include "reins/message.h"

#include "domain/json_parse.h"
#include "domain/json_text.h"

namespace reins {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kSystem: return "system";
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
  }
  return "user";
}

bool ParseRole(std::string_view name, Role* role) {
  for (Role r : {Role::kSystem, Role::kUser, Role::kAssistant, Role::kTool}) {
    if (RoleName(r) == name) {
      *role = r;
      return true;
    }
  }
  return false;
}

Message Message::System(std::string text) {
  Message m;
  m.role = Role::kSystem;
  m.text = std::move(text);
  return m;
}

Message Message::User(std::string text, std::string speaker) {
  Message m;
  m.role = Role::kUser;
  m.text = std::move(text);
  m.speaker = std::move(speaker);
  return m;
}

Message Message::Assistant(std::string text, std::vector<ToolCall> calls) {
  Message m;
  m.role = Role::kAssistant;
  m.text = std::move(text);
  m.tool_calls = std::move(calls);
  return m;
}

Message Message::Tool(std::string call_id, std::string tool_name, std::string content, bool is_error) {
  Message m;
  m.role = Role::kTool;
  m.tool_call_id = std::move(call_id);
  m.tool_name = std::move(tool_name);
  m.text = std::move(content);
  m.is_error = is_error;
  return m;
}

Json MessageToJson(const Message& m) {
  Json j = {{"role", RoleName(m.role)}, {"text", m.text}};
  if (!m.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ToolCall& c : m.tool_calls) {
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments_text}});
    }
    j["tool_calls"] = std::move(calls);
  }
  if (m.role == Role::kTool) {
    j["tool_call_id"] = m.tool_call_id;
    j["tool_name"] = m.tool_name;
    j["is_error"] = m.is_error;
  }
  if (!m.speaker.empty()) j["speaker"] = m.speaker;
  return j;
}

void AppendMessageText(std::string& out, const Message& m) {
  JsonObjectText o(out);  // the keys of MessageToJson, in the order its DOM writes them
  if (m.role == Role::kTool) o.Raw("is_error", m.is_error ? "true" : "false");
  o.String("role", RoleName(m.role));
  if (!m.speaker.empty()) o.String("speaker", m.speaker);
  o.String("text", m.text);
  if (m.role == Role::kTool) o.String("tool_call_id", m.tool_call_id);
  if (!m.tool_calls.empty()) {
    std::string& calls = o.Key("tool_calls");
    calls += '[';
    for (size_t i = 0; i < m.tool_calls.size(); ++i) {
      if (i > 0) calls += ',';
      JsonObjectText call(calls);
      call.String("arguments", m.tool_calls[i].arguments_text);
      call.String("id", m.tool_calls[i].id);
      call.String("name", m.tool_calls[i].name);
      call.Close();
    }
    calls += ']';
  }
  if (m.role == Role::kTool) o.String("tool_name", m.tool_name);
  o.Close();
}

bool MessageFromJson(const Json& j, Message* m) {
  if (!j.is_object() || !j.contains("role") || !j["role"].is_string()) return false;
  if (!ParseRole(j["role"].get<std::string>(), &m->role)) return false;
  m->text = j.value("text", "");
  m->tool_calls.clear();
  if (auto it = j.find("tool_calls"); it != j.end() && it->is_array()) {
    for (const Json& c : *it) {
      ToolCall call;
      call.id = c.value("id", "");
      call.name = c.value("name", "");
      call.arguments_text = c.value("arguments", "");
      Json parsed = ParseJsonOrDiscarded(call.arguments_text);
      call.args_valid = !parsed.is_discarded();
      if (call.args_valid) call.args = std::move(parsed);
      m->tool_calls.push_back(std::move(call));
    }
  }
  m->tool_call_id = j.value("tool_call_id", "");
  m->tool_name = j.value("tool_name", "");
  m->is_error = j.value("is_error", false);
  m->speaker = j.value("speaker", "");
  return true;
}

std::string ToolChoice::ToString() const {
  switch (mode) {
    case Mode::kAuto: return "auto";
    case Mode::kRequired: return "required";
    case Mode::kNone: return "none";
    case Mode::kNamed: return "tool:" + name;
  }
  return "auto";
}

}  // namespace reins

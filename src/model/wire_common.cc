#include "model/wire_common.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "domain/json_parse.h"

namespace reins::wire {

Json Parse(std::string_view text) { return ParseJsonOrDiscarded(text); }

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

std::string Dump(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

const Json* Find(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string String(const Json& obj, const char* key) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

int Int(const Json& obj, const char* key) {
  const Json* v = Find(obj, key);
  if (v == nullptr || !v->is_number_integer()) return 0;
  // Token counts fit an int; clamp anyway so a hostile value cannot overflow.
  if (v->is_number_unsigned()) {
    return static_cast<int>(std::min<uint64_t>(v->get<uint64_t>(), std::numeric_limits<int>::max()));
  }
  int64_t n = v->get<int64_t>();
  return static_cast<int>(std::clamp<int64_t>(n, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

const Json* Object(const Json& obj, const char* key) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_object() ? v : nullptr;
}

const Json* Array(const Json& obj, const char* key) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_array() ? v : nullptr;
}

std::optional<int> OptionInt(const ModelConfig& config, const char* key) {
  const Json* v = Find(config.options, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return Int(config.options, key);
}

std::optional<bool> OptionBool(const ModelConfig& config, const char* key) {
  const Json* v = Find(config.options, key);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

std::string UserText(const Message& m, bool label_speakers) {
  return m.speaker.empty() || !label_speakers ? m.text : "[" + m.speaker + "]: " + m.text;
}

bool SeveralSpeakers(const std::vector<Message>& messages) {
  const std::string* first = nullptr;
  for (const Message& m : messages) {
    if (m.role != Role::kUser || m.speaker.empty()) continue;
    if (first == nullptr) first = &m.speaker;
    else if (*first != m.speaker) return true;
  }
  return false;
}

Json InputSchema(const Json& schema) {
  return schema.is_object() ? schema : Json{{"type", "object"}, {"properties", Json::object()}};
}

size_t BodySizeHint(const ModelRequest& request) {
  size_t n = 256;  // model, options, tool choice, the framing
  for (const Message& m : request.messages) {
    n += 48 + m.text.size() + m.tool_call_id.size() + m.speaker.size();
    for (const ToolCall& c : m.tool_calls) n += 80 + c.id.size() + c.name.size() + 2 * c.arguments_text.size();
  }
  return n;
}

std::shared_ptr<const std::string> ToolsText::Of(const std::shared_ptr<const std::vector<ToolSpec>>& tools) const {
  {
    std::lock_guard lock(mu_);
    if (text_ != nullptr && of_.lock() == tools) return text_;
  }
  // Written outside the lock: two threads that both miss write the same text.
  auto text = std::make_shared<const std::string>(write_(*tools));
  std::lock_guard lock(mu_);
  of_ = tools;
  text_ = text;
  return text;
}

ToolCall MakeToolCall(std::string id, std::string name, const Json& arguments) {
  ToolCall call;
  call.id = std::move(id);
  call.name = std::move(name);
  Json args;
  if (arguments.is_string()) {
    call.arguments_text = arguments.get<std::string>();
    // No arguments at all (some OpenAI-compatible servers send "" for a tool without
    // parameters) means an empty object, as an empty Anthropic partial_json does.
    args = Trim(call.arguments_text).empty() ? Json::object() : Parse(call.arguments_text);
  } else {
    call.arguments_text = Dump(arguments);
    args = arguments;
  }
  call.args_valid = args.is_object();
  call.args = call.args_valid ? std::move(args) : Json::object();
  return call;
}

std::optional<Json> JsonObjectIn(std::string_view text) {
  text = Trim(text);
  if (text.starts_with("```") && text.size() >= 6 && text.ends_with("```")) {
    text = text.substr(3, text.size() - 6);
    size_t newline = text.find('\n');  // drop the info string ("json")
    text = newline == std::string_view::npos ? std::string_view{} : Trim(text.substr(newline + 1));
  }
  Json parsed = Parse(text);
  if (!parsed.is_object()) return std::nullopt;
  return parsed;
}

std::string Snippet(std::string_view bytes) {
  constexpr size_t kMax = 120;
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  if (bytes.size() > kMax) out += "...";
  return out;
}

}  // namespace reins::wire

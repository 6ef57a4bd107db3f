#include "mcp/elicitation.h"

namespace reins {
namespace {

std::string Title(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::vector<ElicitationChoice> ChoicesOf(const Json& schema) {
  std::vector<ElicitationChoice> out;
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
    const Json names = schema.value("enumNames", Json::array());
    for (size_t i = 0; i < e->size(); ++i) {
      const Json& v = (*e)[i];
      std::string title = i < names.size() && names[i].is_string() ? names[i].get<std::string>() : Title(v);
      out.push_back({Title(v), title, v});
    }
  } else if (auto one = schema.find("oneOf"); one != schema.end() && one->is_array()) {
    for (const Json& alt : *one) {
      if (!alt.is_object() || !alt.contains("const")) return {};
      out.push_back({Title(alt["const"]), alt.value("title", Title(alt["const"])), alt["const"]});
    }
  } else if (schema.value("type", "") == "boolean") {
    out.push_back({"yes", "Yes", true});
    out.push_back({"no", "No", false});
  }
  return out;
}

std::optional<ElicitationQuestion> Question(const Json& params);

}  // namespace

std::optional<ElicitationQuestion> QuestionFromElicitation(const Json& params) {
  try {
    return Question(params);
  } catch (const Json::exception&) {  // a field of the wrong type: not a question reins can ask
    return std::nullopt;
  }
}

namespace {

std::optional<ElicitationQuestion> Question(const Json& params) {
  if (!params.is_object()) return std::nullopt;
  const Json schema = params.value("requestedSchema", Json::object());
  const Json properties = schema.value("properties", Json::object());
  const Json required = schema.value("required", Json::array());
  if (!properties.is_object()) return std::nullopt;
  ElicitationQuestion q;
  q.message = params.value("message", "");
  for (const auto& [name, field] : properties.items()) {
    std::vector<ElicitationChoice> choices = field.is_object() ? ChoicesOf(field) : std::vector<ElicitationChoice>{};
    if (q.field.empty() && !choices.empty()) {
      q.field = name;
      q.choices = std::move(choices);
      if (q.message.empty()) q.message = field.value("description", field.value("title", name));
    }
  }
  if (q.field.empty() || q.message.empty()) return std::nullopt;
  for (const Json& r : required) {
    if (!r.is_string() || r.get<std::string>() != q.field) return std::nullopt;  // another field is required
  }
  return q;
}

}  // namespace

Json ClarificationEnvelope(const ElicitationQuestion& q, const Json& resume_args) {
  Json options = Json::array();
  for (const ElicitationChoice& c : q.choices) {
    options.push_back({{"id", c.id},
                       {"title", c.title},
                       {"metadata", {{"elicitation", {{"field", q.field}, {"value", c.value}}}, {"resume_args", resume_args}}}});
  }
  return {{"success", true},
          {"next_action", "clarification_needed"},
          {"data", Json::object()},
          {"clarification", {{"type", kElicitationClarificationType}, {"question", q.message}, {"options", options}}}};
}

}  // namespace reins

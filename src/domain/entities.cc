#include "domain/entities.h"

#include "domain/json_path.h"

namespace reins {

std::string EntityIdText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  return "";
}

std::map<std::string, std::vector<std::string>> ProducedEntities(const ToolDef& tool, const ResultEnvelope& result) {
  std::map<std::string, std::vector<std::string>> out;
  if (!result.success || tool.produces.empty()) return out;
  Json envelope = EnvelopeToJson(result);
  for (const auto& [type, path_text] : tool.produces) {
    auto path = JsonPath::Parse(path_text);
    if (!path.ok()) continue;
    for (const Json* v : path->Select(envelope)) {
      if (std::string id = EntityIdText(*v); !id.empty()) out[type].push_back(id);
    }
  }
  return out;
}

std::map<std::string, std::string> ProducedTitles(const ToolDef& tool, const ResultEnvelope& result) {
  std::map<std::string, std::string> out;
  if (!result.success || tool.produces.empty()) return out;
  Json envelope;
  for (const auto& [type, path_text] : tool.produces) {
    const size_t dot = path_text.rfind('.');
    if (dot == std::string::npos || path_text.find_first_of("[]", dot) != std::string::npos) continue;
    auto parents = JsonPath::Parse(path_text.substr(0, dot));
    if (!parents.ok()) continue;
    if (envelope.is_null()) envelope = EnvelopeToJson(result);
    const std::string key = path_text.substr(dot + 1);
    for (const Json* parent : parents->Select(envelope)) {
      if (!parent->is_object()) continue;
      auto id = parent->find(key);
      if (id == parent->end()) continue;
      for (const char* name : {"title", "name"}) {
        auto title = parent->find(name);
        if (title != parent->end() && title->is_string() && !EntityIdText(*id).empty()) {
          out.emplace(EntityIdText(*id), title->get<std::string>());
          break;
        }
      }
    }
  }
  return out;
}

std::string EntityTypeOfOptions(const ToolDef& tool, const ResultEnvelope& result) {
  if (!result.clarification || tool.produces.empty()) return "";
  if (tool.produces.size() == 1) return tool.produces.begin()->first;
  const std::string& first = result.clarification->options.front().id;
  for (const auto& [type, ids] : ProducedEntities(tool, result)) {
    for (const std::string& id : ids) {
      if (id == first) return type;
    }
  }
  return "";
}

}  // namespace reins

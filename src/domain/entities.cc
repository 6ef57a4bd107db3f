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

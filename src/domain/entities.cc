#include "domain/entities.h"

#include "domain/json_path.h"

namespace reins {

std::string EntityIdText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  return "";
}

namespace {

// The names beside the ids `path_text` selects, when it ends in .KEY: the `title` or else
// the `name` string of each object the id sits in. The first name found for an id stays.
void AddTitles(const std::string& path_text, const Json& envelope, std::map<std::string, std::string>* titles) {
  const size_t dot = path_text.rfind('.');
  if (dot == std::string::npos || path_text.find_first_of("[]", dot) != std::string::npos) return;
  auto parents = JsonPath::Parse(path_text.substr(0, dot));
  if (!parents.ok()) return;
  const std::string key = path_text.substr(dot + 1);
  for (const Json* parent : parents->Select(envelope)) {
    if (!parent->is_object()) continue;
    auto id = parent->find(key);
    if (id == parent->end() || EntityIdText(*id).empty()) continue;
    for (const char* name : {"title", "name"}) {
      auto title = parent->find(name);
      if (title != parent->end() && title->is_string()) {
        titles->emplace(EntityIdText(*id), title->get<std::string>());
        break;
      }
    }
  }
}

}  // namespace

Produced ProducedBy(const ToolDef& tool, const ResultEnvelope& result) {
  Produced out;
  if (!result.success || tool.produces.empty()) return out;
  const Json envelope = EnvelopeToJson(result);  // once, for the ids and their names
  for (const auto& [type, path_text] : tool.produces) {
    auto path = JsonPath::Parse(path_text);
    if (!path.ok()) continue;
    for (const Json* v : path->Select(envelope)) {
      if (std::string id = EntityIdText(*v); !id.empty()) out.ids[type].push_back(id);
    }
    AddTitles(path_text, envelope, &out.titles);
  }
  return out;
}

std::string EntityTypeOfOptions(const ToolDef& tool, const ResultEnvelope& result) {
  if (!result.clarification || tool.produces.empty()) return "";
  if (tool.produces.size() == 1) return tool.produces.begin()->first;
  const std::string& first = result.clarification->options.front().id;
  for (const auto& [type, ids] : ProducedBy(tool, result).ids) {
    for (const std::string& id : ids) {
      if (id == first) return type;
    }
  }
  return "";
}

}  // namespace reins

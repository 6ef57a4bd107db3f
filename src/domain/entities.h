// Entities: the ids tool results produce, per entity type, read with each tool's
// `entities.produces` JSONPaths. The provenance guard checks arguments against them
// (I3); the executor names the entity type a clarification's options are ids of.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reins/agent_config.h"
#include "reins/envelope.h"
#include "reins/json.h"

namespace reins {

// What a successful result produces, by the tool's `entities.produces`: the ids per
// entity type, and the names it gives them: an id selected by a path ending in .KEY
// ("$.data.patients[*].id") is named by the `title` or else the `name` string of the
// object it sits in ({"id": "p_2001", "name": "James Okafor"}).
struct Produced {
  std::map<std::string, std::vector<std::string>> ids;  // type -> ids, in the result's order
  std::map<std::string, std::string> titles;            // id -> name
};
Produced ProducedBy(const ToolDef& tool, const ResultEnvelope& result);

// Which entity type the options of a clarification are ids of: the tool's only
// produced type, else the type whose produced ids include the first option; "" if none.
std::string EntityTypeOfOptions(const ToolDef& tool, const ResultEnvelope& result);

// An entity id as text: strings as they are, integers in decimal; "" for anything else.
std::string EntityIdText(const Json& v);

}  // namespace reins

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

// The ids a result produces, per entity type, using the tool's `entities.produces`.
std::map<std::string, std::vector<std::string>> ProducedEntities(const ToolDef& tool, const ResultEnvelope& result);

// The names a result gives the ids it produces: an id selected by a path ending in .KEY
// ("$.data.patients[*].id") is named by the `title` or else the `name` string of the
// object it sits in ({"id": "p_2001", "name": "James Okafor"}): id -> name.
std::map<std::string, std::string> ProducedTitles(const ToolDef& tool, const ResultEnvelope& result);

// Which entity type the options of a clarification are ids of: the tool's only
// produced type, else the type whose produced ids include the first option; "" if none.
std::string EntityTypeOfOptions(const ToolDef& tool, const ResultEnvelope& result);

// An entity id as text: strings as they are, integers in decimal; "" for anything else.
std::string EntityIdText(const Json& v);

}  // namespace reins

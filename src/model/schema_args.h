// Tool arguments made from a tool's input schema, the way the simulated model fills
// them in: SampleArgs gives what a plausible model sends (valid, with ids it has seen
// and words from the user's request); BreakArgs gives what an unreliable one sends
// (the same arguments made to fail the schema).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "reins/json.h"

namespace reins {

struct ArgHints {
  std::string user_text;                // the request the call serves
  std::vector<std::string> known_ids;   // ids seen in tool results, newest first
  std::vector<std::string> preferred;   // enum values to choose when offered ("accept")
};

// A value that validates against `schema` (for the JSON Schema subset tools use:
// type, properties, required, enum, const, items, min/max lengths and bounds).
Json SampleArgs(const Json& schema, const ArgHints& hints, std::mt19937_64& rng);

// `args` changed so that it breaks `schema`: a required property dropped, a value of
// the wrong type, or an unexpected property where none are allowed. Returns false,
// leaving `args` alone, when the schema accepts anything.
bool BreakArgs(const Json& schema, Json& args, std::mt19937_64& rng);

// Does `name` look like it holds an id (id, user_id, recipientId)?
bool IsIdName(const std::string& name);

}  // namespace reins

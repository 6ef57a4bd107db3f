// The JSON value type used across reins: tool arguments, tool results, trace data.
// nlohmann::json is the one heavy header the public domain types accept, because JSON
// values *are* the domain here (arguments, envelopes, verdicts). YAML, SQLite and Beast
// stay inside src/.
#pragma once

#include <nlohmann/json.hpp>

namespace reins {
using Json = nlohmann::json;
}  // namespace reins

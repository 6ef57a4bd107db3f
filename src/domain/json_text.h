// Compact JSON text for hot paths (the store writes a few kilobytes per turn). Output
// is byte-for-byte what nlohmann::json::dump() gives with invalid UTF-8 replaced; the
// common case (ASCII strings, integers) is appended directly instead of going through
// the library's per-character serializer, which dominated the per-turn commit cost.
#pragma once

#include <string>

#include "reins/json.h"

namespace reins {

// Appends the compact JSON text of `value` to `out`.
void AppendJsonText(std::string& out, const Json& value);
std::string JsonText(const Json& value);

}  // namespace reins

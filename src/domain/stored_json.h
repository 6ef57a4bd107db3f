// Reading what reins stored itself (session state, pending questions) leniently: a
// member of the wrong type reads as empty, never as an error, so that a state written by
// an older or newer version still loads.
#pragma once

#include <string>
#include <vector>

#include "reins/json.h"

namespace reins {

// The strings of the list `j[key]`, ignoring anything else in it; empty when there is none.
inline std::vector<std::string> StoredStrings(const Json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace reins

// UI allow-list (seed 004): UI elements a reply names ("open the Latency Heatmap
// panel") must be on the user's screen, page_context.ui_elements. The audit stage turns
// any it finds into a rewrite_once without asking a model whether to.
#pragma once

#include <string>
#include <vector>

#include "reins/json.h"

namespace reins {

// The UI elements `reply` names that `page_context.ui_elements` does not list.
// `rail_config.element_patterns`: RE2 patterns whose first group is an element name
// (a default pattern catches "<Capitalised Words> panel|tab|view|button|...").
std::vector<std::string> UnknownUiElements(const Json& rail_config, const std::string& reply, const Json& page_context);

}  // namespace reins

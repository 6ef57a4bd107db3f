// SHA-256 of a text, as 64 lowercase hex digits: API keys are stored as it, and the
// write-ahead record's keys are made with it.
#pragma once

#include <string>
#include <string_view>

namespace reins {

std::string Sha256Hex(std::string_view data);

}  // namespace reins

// Small text helpers shared by the rails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "domain/text.h"  // Sentences, AsciiLower
#include "reins/json.h"

namespace reins {

// Compiles a JSON list of RE2 patterns (validated by the config loader); patterns
// that do not compile are skipped.
std::vector<std::unique_ptr<RE2>> CompilePatterns(const Json& list);
bool AnyMatches(const std::vector<std::unique_ptr<RE2>>& patterns, std::string_view text);
// FNV-1a: stable across runs and platforms, unlike std::hash.
uint64_t StableHash(std::string_view text);
// Case-insensitive substring test.
bool ContainsIgnoringCase(const std::string& haystack, const std::string& needle);

}  // namespace reins

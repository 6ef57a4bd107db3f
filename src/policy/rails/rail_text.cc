#include "policy/rails/rail_text.h"

#include <algorithm>
#include <cctype>

namespace reins {

std::vector<std::unique_ptr<RE2>> CompilePatterns(const Json& list) {
  std::vector<std::unique_ptr<RE2>> out;
  if (!list.is_array()) return out;
  for (const Json& p : list) {
    if (!p.is_string()) continue;
    auto re = std::make_unique<RE2>(p.get<std::string>(), RE2::Quiet);
    if (re->ok()) out.push_back(std::move(re));
  }
  return out;
}

bool AnyMatches(const std::vector<std::unique_ptr<RE2>>& patterns, std::string_view text) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::unique_ptr<RE2>& re) { return RE2::PartialMatch(text, *re); });
}

uint64_t StableHash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool ContainsIgnoringCase(const std::string& haystack, const std::string& needle) {
  if (needle.empty()) return false;
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != haystack.end();
}

}  // namespace reins

#include "domain/text.h"

#include <algorithm>
#include <cctype>

namespace reins {

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string> Sentences(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool end = c == '\n' || ((c == '.' || c == '!' || c == '?') &&
                             (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1]))));
    if (!end) continue;
    if (i + 1 > start) out.emplace_back(text.substr(start, i + 1 - start));
    start = i + 1;
  }
  if (start < text.size()) out.emplace_back(text.substr(start));
  return out;
}

}  // namespace reins

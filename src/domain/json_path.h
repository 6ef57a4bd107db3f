// A JSONPath subset for `entities.produces`: `$`, `.key`, `[*]`, `[N]`.
// "$.data.contacts[*].id" selects every contact id of a result envelope.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "reins/json.h"
#include "reins/status.h"

namespace reins {

class JsonPath {
 public:
  // InvalidArgument with the offending position when `text` is outside the subset.
  static Result<JsonPath> Parse(const std::string& text);
  // Every value the path selects; missing keys and out-of-range indexes select nothing.
  std::vector<const Json*> Select(const Json& root) const;
  const std::string& text() const { return text_; }

 private:
  struct Wildcard {};
  using Step = std::variant<std::string, size_t, Wildcard>;
  std::string text_;
  std::vector<Step> steps_;
};

}  // namespace reins

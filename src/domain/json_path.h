// A JSONPath subset for `entities.produces` and `approval.when`: `$`, `.key`, `[*]`, `[N]`.
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
  // An argument's name or, starting with $, a path into the arguments: "amount" is the
  // one-step path to the argument of that name (whatever characters the name has).
  static Result<JsonPath> ParseArgument(const std::string& text);
  // Every value the path selects; missing keys and out-of-range indexes select nothing.
  std::vector<const Json*> Select(const Json& root) const;
  const std::string& text() const { return text_; }
  // The subschema of a JSON Schema for the values the path selects, walking `properties`
  // for a key and `items` for an index or [*]; nullptr where the schema does not say.
  const Json* InSchema(const Json& schema) const;

 private:
  struct Wildcard {};
  using Step = std::variant<std::string, size_t, Wildcard>;
  std::string text_;
  std::vector<Step> steps_;
};

}  // namespace reins

// SchemaValidator: checks tool-call arguments against a tool's input_schema
// (JSON Schema draft 7). The engine is valijson; this wrapper keeps its exceptions,
// its std::regex and its remote-document fetching away from model output.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reins/json.h"
#include "reins/status.h"

namespace reins {

// A compiled JSON Schema (draft 7). Copyable, cheap to copy (shared immutable state),
// thread-safe to use concurrently.
class SchemaValidator {
 public:
  // InvalidArgument with a plain message when the schema does not compile, e.g.
  // "schema: 'pattern' must be a string" or "remote $ref is not supported: URL".
  static Result<SchemaValidator> Compile(const Json& schema);

  // Empty when valid; otherwise one readable line per problem, e.g.
  // "/recipient_id: Value type not permitted by 'type' constraint.". Never throws:
  // a value that cannot be checked is reported as a problem (fail closed).
  std::vector<std::string> Validate(const Json& instance) const;
  bool IsValid(const Json& instance) const { return Validate(instance).empty(); }

 private:
  struct Compiled;
  explicit SchemaValidator(std::shared_ptr<const Compiled> compiled)
      : compiled_(std::move(compiled)) {}

  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace reins

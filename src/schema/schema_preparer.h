// Internal to src/schema/: what is done to a schema, and to a value, before
// valijson sees them. valijson 1.0 resolves $id/$ref wrongly for draft 7, names no
// keyword in some errors, recurses without bound on deep or cyclic input and treats
// 1.0 as a non-integer; these functions work around that so schema_validator.cc only
// compiles and validates.
#pragma once

#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "reins/json.h"

namespace reins::schema_internal {

// A $ref to a document the schema does not contain.
class RemoteRefError : public std::runtime_error {
 public:
  explicit RemoteRefError(const std::string& uri) : std::runtime_error(uri) {}
};

// Rewrites `root` in place for valijson (see SchemaPreparer in schema_preparer.cc):
// renames 'pattern', 'format' and 'multipleOf' to the keywords of schema_constraints.h,
// turns every $ref into the document into a pointer from the root, and refuses
// malformed keywords. Throws RemoteRefError for a $ref outside the document and
// std::runtime_error for other refusals (a patternProperties key RE2 cannot compile
// included). Returns whether the schema uses patternProperties.
[[nodiscard]] bool PrepareSchema(Json& root);

// valijson matches patternProperties keys with std::regex, whose backtracking takes
// exponential time on patterns like ^(a+)+$. Before a value is validated, the prepared
// schema's patternProperties keys are replaced by literal alternations of the value's
// property names that the key matches under RE2 (linear time): the same names match,
// and valijson's regex only ever compares literal strings. $refs into the renamed
// entries follow them.
Json PinPatternProperties(const Json& prepared, const std::set<std::string>& names);

// Looks for what would make validation recurse too deep (copies and comparisons of
// nlohmann values recurse too) or hand valijson a long property name. Iterative, so it
// is safe on any input.
std::optional<std::string> FindHazard(const Json& root, int max_depth, bool limit_property_names);

// Draft 6+ says 1.0 is an integer; valijson's strict mode says it is not, and its weak
// mode would accept "1" as a number. Integral floats in int64 range become integers.
void IntegralFloatsToIntegers(Json& root);
// Whether IntegralFloatsToIntegers would change anything in `root` (most arguments hold
// no float: they are then checked as they are, not copied). Recursive: call it after
// FindHazard has bounded the depth.
bool HasIntegralFloat(const Json& root);

}  // namespace reins::schema_internal

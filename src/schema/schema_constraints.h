// Internal to src/schema/: the constraints that replace valijson's 'pattern',
// 'format' and 'multipleOf' (RE2 instead of std::regex; exact multipleOf), kept apart
// from schema_validator.cc so that file is only about compiling and validating.
#pragma once

#include <memory>
#include <string>

namespace re2 {
class RE2;
}  // namespace re2

namespace valijson {
class SchemaParser;
}  // namespace valijson

namespace reins::schema_internal {

// valijson matches 'pattern' and 'format' with std::regex, whose backtracking
// executor recurses once per input character: a 100 KB string from the model
// overflows the stack. The schema preparer renames both keywords to these, and the
// constraints in schema_constraints.cc check them with RE2 (linear time, no recursion).
inline constexpr char kPatternKeyword[] = "reins-re2-pattern";
inline constexpr char kFormatKeyword[] = "reins-re2-format";
// valijson's multipleOf is replaced too; see MultipleOfConstraint (schema_constraints.cc).
inline constexpr char kMultipleOfKeyword[] = "reins-multiple-of";

// Registers the builders for the three keywords above with `parser`.
void AddReplacementConstraints(valijson::SchemaParser& parser);

// A JSON Schema (ECMA 262) pattern compiled for RE2; throws std::runtime_error naming
// the pattern when RE2 cannot express it (lookarounds, backreferences).
std::shared_ptr<const re2::RE2> CompileRe2(const std::string& pattern);

}  // namespace reins::schema_internal

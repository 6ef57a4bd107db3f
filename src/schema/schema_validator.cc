// SchemaValidator (schema_validator.h) on valijson: compiles a prepared schema with the
// replacement constraints registered, validates values, and turns valijson's results
// into one readable line per problem. The preparation lives in schema_preparer.cc and
// the RE2-based constraints in schema_constraints.cc, so this file stays about the
// compile/validate flow and its error handling.
#include "schema/schema_validator.h"

// valijson reports errors by throwing only when this is set; otherwise it prints and
// calls abort(). Every reins file that includes valijson (this one and
// schema_constraints.cc) sets it first, so the setting is uniform.
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "schema/schema_constraints.h"
#include "schema/schema_preparer.h"

namespace reins {

struct SchemaValidator::Compiled {
  valijson::Schema schema;
  // With patternProperties, each value is validated against the prepared schema with
  // its keys pinned to that value's property names (PinPatternProperties).
  bool uses_pattern_properties = false;
  Json prepared;
};

namespace {

using schema_internal::FindHazard;
using schema_internal::HasIntegralFloat;
using schema_internal::IntegralFloatsToIntegers;
using schema_internal::PinPatternProperties;
using schema_internal::RemoteRefError;
using valijson::adapters::NlohmannJsonAdapter;

// Validation recurses once per nesting level (recursive $refs, enum comparison);
// tool arguments never legitimately nest this deep.
constexpr int kMaxInstanceDepth = 128;
constexpr int kMaxSchemaDepth = 256;

// valijson context ["<root>", "[to]", "[0]"] -> "/to/0" (JSON Pointer escaping).
std::string PathOf(const std::vector<std::string>& context) {
  std::string path;
  for (size_t i = 1; i < context.size(); ++i) {
    std::string_view part = context[i];
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') part = part.substr(1, part.size() - 2);
    path += '/';
    for (char c : part) path += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return path.empty() ? "(root)" : path;
}

// "Failed to validate item #2" and friends only restate the errors below them.
bool IsSummary(const std::string& description) {
  return description.starts_with("Failed to validate item #") ||
         description.starts_with("Failed to validate against schema associated with") ||
         description.starts_with("Failed to validate against additional properties schema");
}

std::vector<std::string> Describe(const valijson::ValidationResults& results) {
  bool has_detail = false;
  for (const auto& error : results) has_detail = has_detail || !IsSummary(error.description);
  std::vector<std::string> lines;
  for (const auto& error : results) {
    if (has_detail && IsSummary(error.description)) continue;
    std::string line = PathOf(error.context) + ": " + error.description;
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  }
  if (lines.empty()) lines.push_back("(root): value does not match the schema");
  return lines;
}

// Every property name in `value` (iterative: the depth is bounded, the width is not).
std::set<std::string> PropertyNames(const Json& value) {
  std::set<std::string> names;
  std::vector<const Json*> stack = {&value};
  while (!stack.empty()) {
    const Json* node = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      for (const auto& [key, child] : node->items()) {
        names.insert(key);
        stack.push_back(&child);
      }
    } else if (node->is_array()) {
      for (const Json& child : *node) stack.push_back(&child);
    }
  }
  return names;
}

// Parses a prepared schema into `out` with the replacement constraints registered.
void Populate(const Json& prepared, valijson::Schema& out, std::string& refused_uri) {
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  schema_internal::AddReplacementConstraints(parser);
  // The preparer turned every $ref into a local pointer, so valijson never fetches;
  // the fetcher refuses anyway, should it ask.
  auto fetch = [&](const std::string& uri) -> const Json* {
    refused_uri = uri;
    return nullptr;
  };
  auto release = [](const Json* document) { delete document; };
  parser.populateSchema(NlohmannJsonAdapter(prepared), out, fetch, release);
}

}  // namespace

Result<SchemaValidator> SchemaValidator::Compile(const Json& schema) {
  std::string refused_uri;
  try {
    if (auto hazard = FindHazard(schema, kMaxSchemaDepth, false)) throw std::runtime_error(*hazard);
    Json prepared = schema;
    const bool uses_pattern_properties = schema_internal::PrepareSchema(prepared);

    auto compiled = std::make_shared<Compiled>();
    compiled->uses_pattern_properties = uses_pattern_properties;
    Populate(prepared, compiled->schema, refused_uri);
    if (uses_pattern_properties) compiled->prepared = std::move(prepared);
    return SchemaValidator(std::move(compiled));
  } catch (const RemoteRefError& e) {
    return InvalidArgument(std::string("remote $ref is not supported: ") + e.what());
  } catch (const std::exception& e) {
    if (!refused_uri.empty()) return InvalidArgument("remote $ref is not supported: " + refused_uri);
    return InvalidArgument(std::string("schema: ") + e.what());
  }
}

std::vector<std::string> SchemaValidator::Validate(const Json& instance) const {
  try {
    if (auto hazard = FindHazard(instance, kMaxInstanceDepth, compiled_->uses_pattern_properties)) {
      return {"(root): value " + *hazard};
    }
    // Copied only to turn an integral float into an integer (most arguments hold none).
    std::optional<Json> normalized;
    if (HasIntegralFloat(instance)) {
      normalized = instance;
      IntegralFloatsToIntegers(*normalized);
    }
    const Json& checked = normalized ? *normalized : instance;
    // One valijson::Validator per call: its regex cache is mutable and unsynchronized.
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::Schema pinned;
    if (compiled_->uses_pattern_properties) {
      std::string refused_uri;
      Populate(PinPatternProperties(compiled_->prepared, PropertyNames(checked)), pinned, refused_uri);
    }
    const valijson::Schema& schema = compiled_->uses_pattern_properties ? pinned : compiled_->schema;
    // Checked first without collecting errors (valijson then stops at the first one and
    // allocates nothing for them); only a failure is checked again to describe it.
    if (validator.validate(schema, NlohmannJsonAdapter(checked), nullptr)) return {};
    valijson::ValidationResults results;
    validator.validate(schema, NlohmannJsonAdapter(checked), &results);
    return Describe(results);
  } catch (const std::exception& e) {
    return {std::string("(root): the value could not be checked: ") + e.what()};
  }
}

}  // namespace reins

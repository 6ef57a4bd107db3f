// LocatedDoc: a YAML file converted to JSON, remembering where every node came from,
// so that validation working on plain JSON can still report "file:line:col".
//
// Scalars are typed the YAML 1.2 core way: quoted scalars are strings; plain ones are
// null (~, null, empty), booleans (true/false), integers, floats, else strings.
// `${VAR}` / `${VAR:-default}` in string values are replaced from the environment.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "reins/json.h"
#include "reins/status.h"

namespace reins {

// A ${VAR} without a value and without a default, where it stands.
struct UnsetVariable {
  std::string pointer;
  SourceMark mark;
  std::string name;
  std::string Message() const;  // what the diagnostic says
};

struct LocatedDoc {
  Json value;
  // Parsed with `defer_unset`: the unset variables, for the caller to judge (a scenario
  // does not need the variables of the parts it replaces); each reads as "".
  std::vector<UnsetVariable> unset;
  // JSON pointer ("/tools/0/name") -> where the key (mapping entries) or node starts.
  std::map<std::string, SourceMark> marks;
  std::string file;

  // The mark of `pointer`, or of its nearest ancestor that has one.
  SourceMark MarkOf(const std::string& pointer) const;
};

// Limits on config and scenario files (docs/security.md): the file's size, the
// nesting depth, and the number of values once aliases are expanded.
inline constexpr size_t kMaxYamlFileBytes = size_t{4} << 20;
inline constexpr int kMaxYamlDepth = 64;
inline constexpr size_t kMaxYamlNodes = 200000;

// Parses YAML text. Syntax errors, unset environment variables and exceeded limits are
// added to `diag`; the result is usable only when diag gained nothing.
LocatedDoc ParseYaml(const std::string& text, const std::string& file_name, Diagnostics& diag, bool defer_unset = false);
// Reads and parses a file; a missing file is a diagnostic too.
LocatedDoc LoadYamlFile(const std::string& path, Diagnostics& diag, bool defer_unset = false);
// A config or scenario file's text, refused beyond kMaxYamlFileBytes.
Result<std::string> ReadConfigText(const std::string& path);

// Appends a key or index to a JSON pointer, escaping ~ and / as RFC 6901 says.
std::string JoinPointer(const std::string& base, const std::string& key);
std::string JoinPointer(const std::string& base, size_t index);

}  // namespace reins

#include "config/located_yaml.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <yaml-cpp/yaml.h>

namespace reins {
namespace {

SourceMark ToMark(const std::string& file, const YAML::Mark& m) {
  if (m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

// ${VAR} and ${VAR:-default}. Returns false when a variable is unset: reported, or
// added to `unset` when the caller judges it.
bool SubstituteEnv(std::string& s, const SourceMark& mark, Diagnostics& diag, std::vector<std::string>* unset) {
  size_t pos = 0;
  bool ok = true;
  while ((pos = s.find("${", pos)) != std::string::npos) {
    size_t close = s.find('}', pos);
    if (close == std::string::npos) break;
    std::string inner = s.substr(pos + 2, close - pos - 2);
    std::string name = inner, fallback;
    bool has_default = false;
    if (size_t d = inner.find(":-"); d != std::string::npos) {
      name = inner.substr(0, d);
      fallback = inner.substr(d + 2);
      has_default = true;
    }
    const char* value = std::getenv(name.c_str());
    std::string replacement;
    if (value != nullptr && (*value != '\0' || !has_default)) {
      replacement = value;
    } else if (has_default) {
      replacement = fallback;
    } else {
      if (unset != nullptr) unset->push_back(name);
      else diag.Add(mark, UnsetVariable{"", mark, name}.Message());
      ok = false;
    }
    s.replace(pos, close - pos + 1, replacement);
    pos += replacement.size();
  }
  return ok;
}

Json PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(begin, &end, 10);
  if (errno == 0 && end == begin + s.size()) return i;
  errno = 0;
  double d = std::strtod(begin, &end);
  bool numeric_start = std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.';
  if (errno == 0 && end == begin + s.size() && numeric_start) return d;
  return s;
}

class Converter {
 public:
  Converter(LocatedDoc& doc, Diagnostics& diag, bool defer_unset) : doc_(doc), diag_(diag), defer_unset_(defer_unset) {}

  void Substitute(std::string& s, const YAML::Node& node, const std::string& pointer) {
    std::vector<std::string> names;
    const SourceMark mark = ToMark(doc_.file, node.Mark());
    SubstituteEnv(s, mark, diag_, defer_unset_ ? &names : nullptr);
    for (std::string& name : names) doc_.unset.push_back({pointer, mark, std::move(name)});
  }

  Json Convert(const YAML::Node& node, const std::string& pointer, int depth) {
    if (depth > kMaxYamlDepth) {
      diag_.Add(doc_.MarkOf(pointer), "document nests deeper than " + std::to_string(kMaxYamlDepth) + " levels");
      return nullptr;
    }
    // An alias (*name) is the anchored node again, so a few aliases of aliases expand
    // to billions of nodes ("billion laughs"): the expanded size is what is bounded.
    if (++nodes_ > kMaxYamlNodes) {
      if (nodes_ == kMaxYamlNodes + 1) {
        diag_.Add(ToMark(doc_.file, node.Mark()), "document expands to more than " + std::to_string(kMaxYamlNodes) +
                                                      " values (aliases that repeat aliases?)");
      }
      return nullptr;
    }
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar: {
        std::string s = node.Scalar();
        Json v = PlainScalar(s);
        if (node.Tag() == "!" || v.is_string()) {  // quoted: always a string
          Substitute(s, node, pointer);
          return s;
        }
        return v;
      }
      case YAML::NodeType::Sequence: {
        Json arr = Json::array();
        size_t i = 0;
        for (const YAML::Node& item : node) {
          std::string child = JoinPointer(pointer, i++);
          doc_.marks[child] = ToMark(doc_.file, item.Mark());
          arr.push_back(Convert(item, child, depth + 1));
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        Json obj = Json::object();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            diag_.Add(ToMark(doc_.file, kv.first.Mark()), "mapping keys must be plain strings");
            continue;
          }
          std::string key = kv.first.Scalar();
          std::string child = JoinPointer(pointer, key);
          doc_.marks[child] = ToMark(doc_.file, kv.first.Mark());
          if (obj.contains(key)) {
            diag_.Add(doc_.marks[child], "duplicate key '" + key + "'");
            continue;
          }
          obj[key] = Convert(kv.second, child, depth + 1);
        }
        return obj;
      }
    }
    return nullptr;
  }

 private:
  LocatedDoc& doc_;
  Diagnostics& diag_;
  bool defer_unset_;
  size_t nodes_ = 0;
};

}  // namespace

std::string JoinPointer(const std::string& base, const std::string& key) {
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return base + "/" + escaped;
}

std::string JoinPointer(const std::string& base, size_t index) {
  return base + "/" + std::to_string(index);
}

SourceMark LocatedDoc::MarkOf(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    if (auto it = marks.find(p); it != marks.end()) return it->second;
    if (p.empty()) return {file, 0, 0};
    size_t slash = p.rfind('/');
    p = slash == std::string::npos ? "" : p.substr(0, slash);
  }
}

std::string UnsetVariable::Message() const {
  return "environment variable " + name + " is not set (write ${" + name + ":-default} to make it optional)";
}

namespace {

// A plain value holding ':' (`store: sqlite::memory:`, `url: http://host:8080`) is what
// most "illegal map value" errors come from: the line's value, quoted, is the fix.
std::string QuotingHint(const std::string& text, int line) {
  if (line < 0) return "";
  size_t start = 0;
  for (int i = 0; i < line && start != std::string::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return "";
  const std::string row = text.substr(start, text.find('\n', start) - start);
  const size_t colon = row.find(": ");
  if (colon == std::string::npos) return "";
  std::string value = row.substr(colon + 2);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
  if (value.empty() || value.find(':') == std::string::npos || value.front() == '"' || value.front() == '\'') return "";
  return " (a value holding ':' must be quoted: " + row.substr(0, colon) + ": \"" + value + "\")";
}

}  // namespace

LocatedDoc ParseYaml(const std::string& text, const std::string& file_name, Diagnostics& diag, bool defer_unset) {
  LocatedDoc doc;
  doc.file = file_name;
  doc.marks[""] = {file_name, 1, 1};
  try {
    YAML::Node root = YAML::Load(text);
    Converter converter(doc, diag, defer_unset);
    doc.value = converter.Convert(root, "", 0);
  } catch (const YAML::Exception& e) {
    diag.Add(ToMark(file_name, e.mark), "YAML syntax error: " + e.msg + QuotingHint(text, e.mark.line));
    doc.value = nullptr;
  }
  return doc;
}

namespace {

// The file's text, or what is wrong with it (a sentence without the path).
std::optional<std::string> ReadLimited(const std::string& path, std::string* text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "is a directory, not a file";
  // A device or a pipe could be endless or block: only regular files are config.
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) return "is not a regular file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read file (does it exist?)";
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text->append(buffer, static_cast<size_t>(in.gcount()));
    if (text->size() > kMaxYamlFileBytes) {
      return "larger than " + std::to_string(kMaxYamlFileBytes >> 20) + " MiB; config and scenario files are small";
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::string> ReadConfigText(const std::string& path) {
  std::string text;
  if (std::optional<std::string> problem = ReadLimited(path, &text)) return InvalidArgument(path + ": " + *problem);
  return text;
}

LocatedDoc LoadYamlFile(const std::string& path, Diagnostics& diag, bool defer_unset) {
  std::string text;
  if (std::optional<std::string> problem = ReadLimited(path, &text)) {
    diag.Add({path, 0, 0}, *problem);
    LocatedDoc doc;
    doc.file = path;
    return doc;
  }
  return ParseYaml(text, path, diag, defer_unset);
}

}  // namespace reins

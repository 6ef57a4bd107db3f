// Diagnostics: the problems found in a config or scenario file, each with a source
// position, reported together as "file:line:col: message" (one per line). Loaders keep
// going after a problem so that one run of `reins check` shows every mistake.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace reins {

struct SourceMark {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
};

struct Diagnostic {
  SourceMark mark;
  std::string message;
};

class Diagnostics {
 public:
  void Add(SourceMark mark, std::string message);
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  // One "file:line:col: message" line per problem, in source order.
  std::string Format() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace reins

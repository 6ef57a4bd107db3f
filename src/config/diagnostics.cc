#include "config/diagnostics.h"

#include <algorithm>

namespace reins {

void Diagnostics::Add(SourceMark mark, std::string message) {
  items_.push_back({std::move(mark), std::move(message)});
}

std::string Diagnostics::Format() const {
  std::vector<Diagnostic> sorted = items_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.mark.file != b.mark.file) return a.mark.file < b.mark.file;
    if (a.mark.line != b.mark.line) return a.mark.line < b.mark.line;
    return a.mark.column < b.mark.column;
  });
  std::string out;
  for (const Diagnostic& d : sorted) {
    out += d.mark.file;
    if (d.mark.line > 0) out += ":" + std::to_string(d.mark.line) + ":" + std::to_string(d.mark.column);
    out += ": " + d.message + "\n";
  }
  return out;
}

}  // namespace reins

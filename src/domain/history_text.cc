#include "domain/history_text.h"

namespace reins {

void HistoryText::Truncate(size_t n) {
  if (n >= ends.size()) return;
  text.resize(n == 0 ? 0 : ends[n - 1]);
  ends.resize(n);
}

void HistoryText::DropFront(size_t n) {
  if (n == 0) return;
  if (n >= ends.size()) {
    text.clear();
    ends.clear();
    return;
  }
  const size_t cut = ends[n - 1] + 1;  // and the comma after it
  text.erase(0, cut);
  ends.erase(ends.begin(), ends.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t& end : ends) end -= cut;
}

}  // namespace reins

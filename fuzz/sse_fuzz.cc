// A server-sent event stream -> the SSE parser, split at every point the first byte
// chooses: events must not depend on how the bytes were cut.
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "net/sse.h"

namespace reins {

REINS_FUZZ_TARGET(sse) {
  if (input.empty()) return;
  const size_t step = 1 + static_cast<unsigned char>(input[0]) % 16;
  input.remove_prefix(1);
  std::vector<SseEvent> whole, pieces;
  SseParser one;
  one.Feed(input, [&](SseEvent&& e) { whole.push_back(std::move(e)); });
  SseParser many;
  for (size_t at = 0; at < input.size(); at += step) {
    many.Feed(input.substr(at, step), [&](SseEvent&& e) { pieces.push_back(std::move(e)); });
  }
  if (whole.size() != pieces.size()) std::abort();
  for (size_t i = 0; i < whole.size(); ++i) {
    if (whole[i].event != pieces[i].event || whole[i].data != pieces[i].data) std::abort();
  }
}

}  // namespace reins

// The trace viewer's files (src/ui), compiled in: `reins serve` answers /ui/ from them
// and the `reins eval` report inlines timeline.js, the one renderer of a turn's
// timeline (domain/timeline.h builds what it renders).
#pragma once

#include <string_view>

namespace reins {

struct UiAsset {
  std::string_view name;          // "index.html", "viewer.js", ...
  std::string_view content_type;  // with its charset
  std::string_view text;
};

// The file called `name`; null when there is none.
const UiAsset* FindUiAsset(std::string_view name);

}  // namespace reins

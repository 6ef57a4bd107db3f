#include "cli/term.h"

#include <cstdlib>

#include <unistd.h>

namespace reins {

Term Term::ForStdout() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  bool color = isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0') &&
               !(term != nullptr && std::string(term) == "dumb");
  return Term(color);
}

}  // namespace reins

// Progress: a one-line progress bar on stderr for long runs (eval, fuzz): done/total,
// runs per second and the time left. Silent when stderr is not a terminal, so logs
// and CI output stay clean.
#pragma once

#include <chrono>
#include <string>

namespace reins {

class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress() { Finish(); }
  void Update(int done, int total);  // redraws at most ten times a second
  void Finish();                     // clears the line

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace reins

#include "cli/progress.h"

#include <cstdio>

#include <unistd.h>

namespace reins {

Progress::Progress(std::string label)
    : label_(std::move(label)),
      enabled_(isatty(STDERR_FILENO) != 0),
      started_(std::chrono::steady_clock::now()),
      last_draw_(started_) {}

void Progress::Update(int done, int total) {
  if (!enabled_ || total <= 0) return;
  auto now = std::chrono::steady_clock::now();
  if (done < total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  double seconds = std::chrono::duration<double>(now - started_).count();
  double rate = seconds > 0 ? done / seconds : 0;
  double eta = rate > 0 ? (total - done) / rate : 0;
  const int width = 30;
  int filled = static_cast<int>(static_cast<double>(done) / total * width);
  std::string bar(static_cast<size_t>(filled), '#');
  bar += std::string(static_cast<size_t>(width - filled), '.');
  std::fprintf(stderr, "\r%s [%s] %d/%d  %.0f runs/s  ETA %.0fs   ", label_.c_str(), bar.c_str(), done, total, rate, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace reins

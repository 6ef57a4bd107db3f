// The peer job's driver (peer_job.cc), its embedded run (embedded.cc) and the C++ floor
// (floor.cc).
#pragma once

#include <sys/resource.h>

#include <string>

namespace reins::peer_job {

inline constexpr int kWarmTurns = 300;  // before any measurement: caches, pools, allocator

// This process's CPU time so far, user and system, every thread (getrusage).
inline double OwnCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Runs the job embedded: kWarmTurns, then `turns` measured; prints one JSON line. Each
// turn begins its session (Runtime::StartSession), or with `create_first` runs in one
// that CreateSession made before it.
int RunEmbedded(const std::string& mock_url, const std::string& dir, int turns, bool create_first);

// How a turn's cost grows: kWarmTurns, then `samples` sessions of the agent in file
// `agent`, each with `history` earlier turns and then its next turn, measured alone;
// prints one JSON line.
int RunEmbeddedGrowth(const std::string& mock_url, const std::string& dir, const std::string& agent, int history,
                      int samples);

// Runs the job as a hand-written C++ loop without governance, the machine's floor
// (floor.cc): kWarmTurns and `turns` measured, without and then with a SQLite commit per
// turn; prints one JSON line.
int RunFloor(const std::string& mock_url, const std::string& dir, int turns);

}  // namespace reins::peer_job

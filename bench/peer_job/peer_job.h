// The peer job's driver (peer_job.cc), its embedded run (embedded.cc) and the C++ floor
// (floor.cc).
#pragma once

#include <sys/resource.h>

#include <string>

namespace reins::peer_job {

inline constexpr int kWarmTurns = 300;  // before any measurement: caches, pools, allocator

// CPU time, every thread: in user space and in the kernel (system time: the system
// calls, and the network stack's work that a send does for both ends of the loopback).
// The sum is exact; the kernel sets the split by what it finds at its ticks, so it
// moves by tens of µs a turn from run to run.
struct CpuUse {
  double user = 0;    // seconds
  double system = 0;  // seconds
  double total() const { return user + system; }
  CpuUse operator-(const CpuUse& before) const { return {user - before.user, system - before.system}; }
};

// This process's CPU time so far (getrusage).
inline CpuUse OwnCpu() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}
inline double OwnCpuSeconds() { return OwnCpu().total(); }

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

// The peer job's driver (peer_job.cc) and its embedded run (embedded.cc).
#pragma once

#include <string>

namespace reins::peer_job {

inline constexpr int kWarmTurns = 300;  // before any measurement: caches, pools, allocator

// Runs the job embedded: kWarmTurns, then `turns` measured; prints one JSON line.
int RunEmbedded(const std::string& mock_url, const std::string& dir, int turns);

}  // namespace reins::peer_job

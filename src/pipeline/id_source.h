// IdSource: the runtime's ids (sessions, turns, replicas). They sort by creation time
// (11 hex digits of milliseconds, then 24 random ones), so the store's indexes grow at
// their end instead of splitting pages at random. A seed (scenarios) makes them
// reproducible. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>

#include "reins/clock.h"

namespace reins {

class IdSource {
 public:
  IdSource(uint64_t seed, const Clock& clock);
  std::string New(const char* prefix);

 private:
  // Random bytes are drawn from OpenSSL a page at a time: one RAND_bytes per id cost
  // more than the rest of the id (a lock and a fork check each). Under mu_. The process
  // never forks without exec, so no two processes hand out the same pool.
  bool TakeRandom(unsigned char (&out)[12]);

  const uint64_t seed_;
  const Clock& clock_;
  std::mutex mu_;  // guards the three below
  std::mt19937_64 rng_;
  unsigned char pool_[4096];
  size_t used_ = sizeof pool_;
};

}  // namespace reins

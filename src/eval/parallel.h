// ParallelFor: runs fn(0..n-1) on `threads` worker threads (0: one per core). The runs
// of eval and fuzz are independent, so this is all the scheduling they need.
// `on_done(done, n)` is called after each item, one call at a time.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace reins {

inline int WorkerCount(int threads) {
  return std::max(1, threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()));
}

inline void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn,
                        const std::function<void(int, int)>& on_done = nullptr) {
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  std::mutex mutex;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      fn(i);
      int finished = ++done;
      if (on_done) {
        std::lock_guard<std::mutex> lock(mutex);
        on_done(finished, static_cast<int>(n));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < WorkerCount(threads); ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
}

}  // namespace reins

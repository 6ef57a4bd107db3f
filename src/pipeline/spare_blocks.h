// FromSpareBlocks<T>: T's objects in blocks its thread keeps when they are freed, for
// its next ones. For the turn's large objects (its state, 2.2 KB; its record, 1.2 KB):
// glibc serves a block over 1 KB only after merging every small block freed since its
// last such request, which cost about 6 k instructions a turn (docs/PERFORMANCE.md,
// round 12). Asio recycles its handlers' memory the same way. Under AddressSanitizer
// every block comes from malloc and goes back to it, so that a use after free is caught.
#pragma once

#include <array>
#include <cstddef>
#include <new>

namespace reins {

// Blocks of one size. Not thread-safe: one per thread.
class SpareBlocks {
 public:
  SpareBlocks() = default;
  SpareBlocks(const SpareBlocks&) = delete;
  SpareBlocks& operator=(const SpareBlocks&) = delete;
  ~SpareBlocks() {
    while (count_ > 0) ::operator delete(blocks_[--count_]);
  }

  void* Take(size_t size) {
    if (count_ > 0 && size == size_) return blocks_[--count_];
    return ::operator new(size);
  }
  void Give(void* block, [[maybe_unused]] size_t size) {
#ifndef __SANITIZE_ADDRESS__
    if (count_ == 0) size_ = size;
    if (size == size_ && count_ < blocks_.size()) {
      blocks_[count_++] = block;
      return;
    }
#endif
    ::operator delete(block);
  }

 private:
  std::array<void*, 16> blocks_{};  // enough for the turns one thread ends in a row
  size_t count_ = 0;
  size_t size_ = 0;
};

template <typename T>
struct FromSpareBlocks {
  static void* operator new(size_t size) { return Spare().Take(size); }
  static void operator delete(void* block, size_t size) { Spare().Give(block, size); }

 private:
  static SpareBlocks& Spare() {
    thread_local SpareBlocks blocks;
    return blocks;
  }
};

}  // namespace reins

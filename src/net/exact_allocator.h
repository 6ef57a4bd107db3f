// ExactAllocator: for an asynchronous operation that stays pending while a model
// thinks, its block allocated at its own size. Asio's default (also for
// std::allocator) recycles the last blocks its thread freed, and handed an 800-byte
// block of a finished write to a wait of 100 (docs/PERFORMANCE.md, round 15).
// Bound to a handler with boost::asio::bind_allocator(ExactAllocator<void>(), ...).
#pragma once

#include <cstddef>
#include <new>

namespace reins {

template <typename T>
struct ExactAllocator {
  using value_type = T;
  ExactAllocator() = default;
  template <typename U>
  ExactAllocator(const ExactAllocator<U>& /*other*/) {}  // NOLINT: converting, as allocators are
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
  void deallocate(T* p, size_t /*n*/) { ::operator delete(p); }
  template <typename U>
  bool operator==(const ExactAllocator<U>& /*other*/) const { return true; }
};

}  // namespace reins

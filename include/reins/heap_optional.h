// HeapOptional<T>: an optional value held on the heap. Absent, it costs a pointer where
// std::optional costs the whole value; present, one allocation. For what is rarely there
// and large (a pending question, an approval, a lease) in objects that many turns hold
// at once: a session's state, a turn's result. Copies are deep, as std::optional's, and
// the common parts of optional's interface are here (bool test, *, ->, has_value, reset,
// = value, = std::nullopt).
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace reins {

template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(std::nullopt_t) {}                                             // NOLINT: implicit, as optional's
  HeapOptional(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  HeapOptional(std::optional<T> value)                                      // NOLINT
      : value_(value ? std::make_unique<T>(std::move(*value)) : nullptr) {}
  HeapOptional(const HeapOptional& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& other) {
    if (this != &other) value_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;

  explicit operator bool() const { return value_ != nullptr; }
  bool has_value() const { return value_ != nullptr; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace reins

// Enums that have a spelling outside the program (config files, stored JSON, the API):
// each declares one table of its values and their names, and these read it both ways.
//
//   enum class DeferredMode { kAwait, kBackground };
//   inline constexpr EnumNames<DeferredMode, 2> kDeferredModes{{{{DeferredMode::kAwait, "await"}, ...}}};
//   kDeferredModes.Name(mode);   kDeferredModes.Parse("await");
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace reins {

template <typename E, size_t N>
struct EnumNames {
  std::array<std::pair<E, std::string_view>, N> entries;

  constexpr std::string_view Name(E value) const {
    for (const auto& [e, name] : entries) {
      if (e == value) return name;
    }
    return entries[0].second;
  }
  constexpr std::optional<E> Parse(std::string_view name) const {
    for (const auto& [e, n] : entries) {
      if (n == name) return e;
    }
    return std::nullopt;
  }
};

}  // namespace reins

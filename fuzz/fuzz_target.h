// One fuzz target: a function from untrusted bytes to a production entry point
// (docs/security.md lists them). REINS_FUZZ_TARGET(name) { ... } defines it once and
// builds two ways:
// - with REINS_LIBFUZZER (make fuzz, clang): the target is LLVMFuzzerTestOneInput of
//   its own libFuzzer binary;
// - otherwise it registers itself with reins_fuzz_replay, which runs every target over
//   its committed corpus and regression inputs in `make test`.
// A target must never crash, hang or leak on any input; a Status it gets back is fine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace reins::fuzz {

using Target = void (*)(std::string_view input);
bool Register(const char* name, Target target);

}  // namespace reins::fuzz

#ifdef REINS_LIBFUZZER
#define REINS_FUZZ_TARGET(name)                                              \
  static void name##_fuzz(std::string_view input);                            \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {  \
    name##_fuzz(std::string_view(reinterpret_cast<const char*>(data), size)); \
    return 0;                                                                \
  }                                                                          \
  static void name##_fuzz(std::string_view input)
#else
#define REINS_FUZZ_TARGET(name)                                                       \
  static void name##_fuzz(std::string_view input);                                     \
  [[maybe_unused]] static const bool name##_registered = ::reins::fuzz::Register(#name, name##_fuzz); \
  static void name##_fuzz(std::string_view input)
#endif

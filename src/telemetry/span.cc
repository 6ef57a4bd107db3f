#include "telemetry/span.h"

#include <cstdio>

namespace reins::telemetry {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

// FNV-1a, 64 bits: ids need to be stable and spread, not secret.
uint64_t Fnv1a(std::string_view data, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string Hex64(uint64_t v) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(v == 0 ? 1 : v));
  return out;
}

}  // namespace

std::optional<TraceContext> ParseTraceparent(std::string_view header) {
  // 00-<32 hex>-<16 hex>-<2 hex>
  if (header.size() != 55 || header.substr(0, 3) != "00-" || header[35] != '-' || header[52] != '-') return std::nullopt;
  const std::string_view trace = header.substr(3, 32), span = header.substr(36, 16), flags = header.substr(53, 2);
  if (!IsLowerHex(trace) || !IsLowerHex(span) || !IsLowerHex(flags) || AllZero(trace) || AllZero(span)) {
    return std::nullopt;
  }
  const int bits = std::stoi(std::string(flags), nullptr, 16);
  return TraceContext{std::string(trace), std::string(span), (bits & 1) != 0};
}

std::string FormatTraceparent(const TraceContext& c) {
  return "00-" + c.trace_id + "-" + c.span_id + (c.sampled ? "-01" : "-00");
}

std::string DerivedTraceId(std::string_view seed) {
  return Hex64(Fnv1a(seed, 0xcbf29ce484222325ull)) + Hex64(Fnv1a(seed, 0x84222325cbf29ce4ull));
}

std::string DerivedSpanId(std::string_view seed) { return Hex64(Fnv1a(seed, 0xcbf29ce484222325ull ^ 0x5eed)); }

}  // namespace reins::telemetry

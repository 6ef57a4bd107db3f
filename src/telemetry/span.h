// Span: one OpenTelemetry span as reins builds it from a turn's trace (turn_spans.h) and
// exports it (otlp_json.h, otlp_exporter.h), and the W3C trace context it belongs to.
// No OpenTelemetry SDK: Debian packages none, and reins needs only this much of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reins/json.h"

namespace reins::telemetry {

// OTLP's SpanKind values.
enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3 };

// Attribute values are JSON: a string, a bool, an integer, a double, or an array of one
// of those (OTLP's AnyValue without maps and bytes).
using Attributes = std::vector<std::pair<std::string, Json>>;

struct SpanEvent {
  std::string name;
  int64_t time_ns = 0;
  Attributes attributes;
};

struct Span {
  std::string trace_id;        // 32 lower-case hex digits
  std::string span_id;         // 16 lower-case hex digits
  std::string parent_span_id;  // "" for a root span
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  Attributes attributes;
  std::vector<SpanEvent> events;
  bool error = false;  // status ERROR with `error_message`; otherwise UNSET
  std::string error_message;
};

// W3C Trace Context: `traceparent: 00-<trace-id>-<parent-id>-<flags>`.
struct TraceContext {
  std::string trace_id;  // 32 hex
  std::string span_id;   // 16 hex
  bool sampled = true;
};
// nullopt for anything but a well-formed version-00 header with non-zero ids (the
// specification says to ignore such a header and start a new trace).
std::optional<TraceContext> ParseTraceparent(std::string_view header);
std::string FormatTraceparent(const TraceContext& context);

// Ids derived from names: the same turn gives the same span ids wherever they are
// computed (the turn's process, a tool backend it called, a replica that ran its
// deferred write later), so a span's children need no shared state to find it.
std::string DerivedTraceId(std::string_view seed);  // 32 hex, never all zero
std::string DerivedSpanId(std::string_view seed);   // 16 hex, never all zero

}  // namespace reins::telemetry

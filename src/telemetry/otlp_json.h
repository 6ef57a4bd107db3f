// The OTLP/HTTP JSON encoding of spans (opentelemetry-proto's JSON mapping): trace and
// span ids as hex strings, 64-bit integers (times, intValue) as decimal strings, enums
// (span kind, status code) as integers, attributes as {key, value: {stringValue |
// boolValue | intValue | doubleValue | arrayValue}}.
#pragma once

#include <string>
#include <vector>

#include "reins/json.h"
#include "telemetry/span.h"

namespace reins::telemetry {

// Who sends the spans: service.name and the SDK attributes every exporter sets.
struct Resource {
  std::string service_name;
  std::string service_version;
};

// The body of POST /v1/traces: one resource, one scope ("reins"), the spans in order.
Json TraceRequestJson(const Resource& resource, const std::vector<Span>& spans);
// The same body as text, written straight from the spans (what the exporter sends: no
// DOM is built per span just to be dumped once). TraceRequestJson's dump, byte for byte.
std::string TraceRequestText(const Resource& resource, const std::vector<Span>& spans);

// One attribute value as OTLP's AnyValue.
Json AnyValue(const Json& value);

}  // namespace reins::telemetry

#include "telemetry/otlp_json.h"

#include "domain/json_text.h"

namespace reins::telemetry {
namespace {

Json KeyValues(const Attributes& attributes) {
  Json out = Json::array();
  for (const auto& [key, value] : attributes) {
    if (value.is_null()) continue;  // an absent value is no attribute
    out.push_back({{"key", key}, {"value", AnyValue(value)}});
  }
  return out;
}

Json SpanJson(const Span& s) {
  Json span = {{"traceId", s.trace_id},
               {"spanId", s.span_id},
               {"name", s.name},
               {"kind", static_cast<int>(s.kind)},
               {"startTimeUnixNano", std::to_string(s.start_ns)},
               {"endTimeUnixNano", std::to_string(s.end_ns)},
               {"attributes", KeyValues(s.attributes)}};
  if (!s.parent_span_id.empty()) span["parentSpanId"] = s.parent_span_id;
  Json events = Json::array();
  for (const SpanEvent& e : s.events) {
    events.push_back({{"name", e.name}, {"timeUnixNano", std::to_string(e.time_ns)}, {"attributes", KeyValues(e.attributes)}});
  }
  if (!events.empty()) span["events"] = std::move(events);
  // STATUS_CODE_ERROR = 2; UNSET (0) is left out, as the mapping allows for defaults.
  if (s.error) span["status"] = {{"code", 2}, {"message", s.error_message}};
  return span;
}

// The text writer: keys in the same (sorted) order as the DOM's dump, so the two agree.
// AnyValue(value) written straight to text: building its DOM to dump it was most of the
// exporter thread's cost per span.
void AppendAnyValue(std::string& out, const Json& value) {
  JsonObjectText any(out);
  if (value.is_boolean()) {
    any.Key("boolValue") += value.get<bool>() ? "true" : "false";
  } else if (value.is_number_integer()) {
    any.String("intValue", std::to_string(value.get<int64_t>()));
  } else if (value.is_number_float()) {
    any.Value("doubleValue", value);
  } else if (value.is_array()) {
    JsonObjectText array(any.Key("arrayValue"));
    std::string& values = array.Key("values");
    values += '[';
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) values += ',';
      AppendAnyValue(values, value[i]);
    }
    values += ']';
    array.Close();
  } else if (value.is_string()) {
    any.String("stringValue", value.get_ref<const std::string&>());
  } else {
    any.String("stringValue", value.dump(-1, ' ', false, Json::error_handler_t::replace));  // an object: as JSON text
  }
  any.Close();
}

void AppendKeyValues(std::string& out, const Attributes& attributes) {
  out += '[';
  bool first = true;
  for (const auto& [key, value] : attributes) {
    if (value.is_null()) continue;
    if (!first) out += ',';
    first = false;
    JsonObjectText kv(out);
    kv.String("key", key);
    AppendAnyValue(kv.Key("value"), value);
    kv.Close();
  }
  out += ']';
}

void AppendSpan(std::string& out, const Span& s) {
  JsonObjectText o(out);
  AppendKeyValues(o.Key("attributes"), s.attributes);
  o.String("endTimeUnixNano", std::to_string(s.end_ns));
  if (!s.events.empty()) {
    std::string& events = o.Key("events");
    events += '[';
    for (size_t i = 0; i < s.events.size(); ++i) {
      if (i > 0) events += ',';
      JsonObjectText e(events);
      AppendKeyValues(e.Key("attributes"), s.events[i].attributes);
      e.String("name", s.events[i].name);
      e.String("timeUnixNano", std::to_string(s.events[i].time_ns));
      e.Close();
    }
    events += ']';
  }
  o.Key("kind") += std::to_string(static_cast<int>(s.kind));
  o.String("name", s.name);
  if (!s.parent_span_id.empty()) o.String("parentSpanId", s.parent_span_id);
  o.String("spanId", s.span_id);
  o.String("startTimeUnixNano", std::to_string(s.start_ns));
  if (s.error) {
    JsonObjectText status(o.Key("status"));
    status.Key("code") += "2";
    status.String("message", s.error_message);
    status.Close();
  }
  o.String("traceId", s.trace_id);
  o.Close();
}

Attributes ResourceAttributes(const Resource& resource) {
  Attributes attributes = {{"service.name", resource.service_name},
                           {"telemetry.sdk.name", "reins"},
                           {"telemetry.sdk.language", "cpp"}};
  if (!resource.service_version.empty()) attributes.emplace_back("service.version", resource.service_version);
  return attributes;
}

}  // namespace

Json AnyValue(const Json& value) {
  if (value.is_boolean()) return {{"boolValue", value.get<bool>()}};
  if (value.is_number_integer()) return {{"intValue", std::to_string(value.get<int64_t>())}};
  if (value.is_number_float()) return {{"doubleValue", value.get<double>()}};
  if (value.is_array()) {
    Json values = Json::array();
    for (const Json& v : value) values.push_back(AnyValue(v));
    return {{"arrayValue", {{"values", std::move(values)}}}};
  }
  if (value.is_string()) return {{"stringValue", value.get<std::string>()}};
  return {{"stringValue", value.dump(-1, ' ', false, Json::error_handler_t::replace)}};  // an object: as JSON text
}

Json TraceRequestJson(const Resource& resource, const std::vector<Span>& spans) {
  const Attributes attributes = ResourceAttributes(resource);
  Json out = Json::array();
  for (const Span& s : spans) out.push_back(SpanJson(s));
  Json scope = {{"scope", {{"name", "reins"}}}, {"spans", std::move(out)}};
  return {{"resourceSpans", Json::array({Json{{"resource", {{"attributes", KeyValues(attributes)}}},
                                              {"scopeSpans", Json::array({std::move(scope)})}}})}};
}

}  // namespace reins::telemetry

namespace reins::telemetry {

std::string TraceRequestText(const Resource& resource, const std::vector<Span>& spans) {
  std::string out;
  out.reserve(1024 * spans.size() + 256);
  out += R"({"resourceSpans":[{"resource":{"attributes":)";
  AppendKeyValues(out, ResourceAttributes(resource));
  out += R"(},"scopeSpans":[{"scope":{"name":"reins"},"spans":[)";
  for (size_t i = 0; i < spans.size(); ++i) {
    if (i > 0) out += ',';
    AppendSpan(out, spans[i]);
  }
  out += "]}]}]}";
  return out;
}

}  // namespace reins::telemetry

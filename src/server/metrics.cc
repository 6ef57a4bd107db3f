#include "server/metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "domain/json_text.h"

namespace reins {
namespace {

constexpr double kBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
constexpr size_t kBucketCount = sizeof(kBuckets) / sizeof(kBuckets[0]);

void AppendEscaped(std::string& out, std::string_view v) {
  // Label values almost never need it: checked eight bytes at a time (plain for JSON is
  // plain here: no '\\', '"' or line break), byte by byte only when something is there.
  if (IsPlainJsonAscii(v)) {
    out += v;
    return;
  }
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
}

// {a="1",b="2"} into `out`, labels sorted by name so one label set is one series.
void AppendLabelText(std::string& out, Labels labels) {
  if (labels.size() == 0) return;
  std::array<Label, 4> few;  // every label set reins writes; more go to the heap
  std::vector<Label> many;
  if (labels.size() > few.size()) many.resize(labels.size());
  Label* sorted = many.empty() ? few.data() : many.data();
  const size_t n = labels.size();
  std::copy(labels.begin(), labels.end(), sorted);
  std::sort(sorted, sorted + n);
  out += '{';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += sorted[i].first;
    out += "=\"";
    AppendEscaped(out, sorted[i].second);
    out += '"';
  }
  out += '}';
}

// Adds a label to a rendered label set: {a="1"} + le="0.5" -> {a="1",le="0.5"}.
std::string WithLabel(const std::string& set, const std::string& label) {
  if (set.empty()) return "{" + label + "}";
  return set.substr(0, set.size() - 1) + "," + label + "}";
}

std::string Number(double v) {
  if (std::isinf(v)) return "+Inf";
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

Metrics::Metrics() {
  Describe("reins_http_requests_total", /*unlabeled=*/false, Type::kCounter, "HTTP requests by route and status.");
  Describe("reins_http_request_duration_seconds", /*unlabeled=*/false, Type::kHistogram, "HTTP request latency by route.");
  Describe("reins_turns_total", /*unlabeled=*/false, Type::kCounter, "Turns by final status.");
  Describe("reins_model_calls_total", /*unlabeled=*/false, Type::kCounter, "Model calls by purpose and provider.");
  Describe("reins_model_call_duration_seconds", /*unlabeled=*/false, Type::kHistogram, "Model call latency.");
  Describe("reins_tool_calls_total", /*unlabeled=*/false, Type::kCounter, "Tool calls by tool, status and whether deferred.");
  Describe("reins_writes_total", /*unlabeled=*/false, Type::kCounter,
           "Immediate writes by tool and outcome: ran, replayed (an earlier try's outcome), retried (under its key), "
           "uncertain (not run again; the person told).");
  Describe("reins_rails_fired_total", /*unlabeled=*/false, Type::kCounter, "Reply rails that changed a reply.");
  Describe("reins_leases_blocked_total", /*unlabeled=*/true, Type::kCounter, "Turns blocked by a floor lease.");
  Describe("reins_audit_repairs_total", /*unlabeled=*/false, Type::kCounter, "Audit outcomes by repair.");
  Describe("reins_outbox_depth", /*unlabeled=*/true, Type::kGauge, "Deferred writes not yet finished.");
  Describe("reins_mcp_tools_withheld", /*unlabeled=*/true, Type::kGauge,
           "MCP tools not offered to the model: their listing no longer matches the agent's MCP lock.");
  Describe("reins_sessions_created_total", /*unlabeled=*/true, Type::kCounter, "Sessions created by this process.");
  Describe("reins_sessions", /*unlabeled=*/true, Type::kGauge, "Sessions in the store.");
  Describe("reins_sessions_cached", /*unlabeled=*/true, Type::kGauge, "Sessions held in memory (--session-cache).");
  Describe("reins_connections_open", /*unlabeled=*/true, Type::kGauge, "HTTP connections open now.");
  Describe("reins_connections_refused_total", /*unlabeled=*/false, Type::kCounter,
           "Connections answered 503 and closed, by reason (max_connections, fd_exhausted).");
  Describe("reins_telemetry_spans_exported_total", /*unlabeled=*/false, Type::kCounter,
           "OpenTelemetry spans the collector accepted.");
  Describe("reins_telemetry_spans_dropped_total", /*unlabeled=*/false, Type::kCounter,
           "OpenTelemetry spans dropped, by reason (queue_full, export_failed, collector_down).");
}

void Metrics::Describe(std::string name, bool unlabeled, Type type, std::string help) {
  Family& f = families_[std::move(name)];
  f.type = type;
  f.help = std::move(help);
  f.unlabeled = unlabeled;
}

Metrics::Family& Metrics::Get(std::string_view name, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) it = families_.emplace(std::string(name), Family{type, "", {}, false}).first;
  return it->second;
}

Metrics::Series& Metrics::At(Family& family, Labels labels) {
  label_text_.clear();
  AppendLabelText(label_text_, labels);
  auto it = family.series.find(label_text_);
  if (it == family.series.end()) it = family.series.emplace(label_text_, Series{}).first;
  return it->second;
}

void Metrics::Inc(std::string_view name, Labels labels, double by) {
  std::lock_guard lock(mu_);
  At(Get(name, Type::kCounter), labels).value += by;
}

void Metrics::Set(std::string_view name, Labels labels, double value) {
  std::lock_guard lock(mu_);
  At(Get(name, Type::kGauge), labels).value = value;
}

void Metrics::Observe(std::string_view name, Labels labels, double seconds) {
  std::lock_guard lock(mu_);
  Series& s = At(Get(name, Type::kHistogram), labels);
  if (s.buckets.empty()) s.buckets.assign(kBucketCount, 0);
  for (size_t i = 0; i < kBucketCount; ++i) {
    if (seconds <= kBuckets[i]) {
      ++s.buckets[i];
      break;
    }
  }
  s.value += seconds;
  ++s.count;
}

namespace {

// The entries of `map` in the order of their keys: the exposition is the same from
// scrape to scrape.
template <typename Map>
std::vector<const typename Map::value_type*> Sorted(const Map& map) {
  std::vector<const typename Map::value_type*> out;
  out.reserve(map.size());
  for (const auto& entry : map) out.push_back(&entry);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return out;
}

}  // namespace

std::string Metrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto* family : Sorted(families_)) {
    const auto& [name, f] = *family;
    const char* type = f.type == Type::kCounter ? "counter" : f.type == Type::kGauge ? "gauge" : "histogram";
    if (!f.help.empty()) out += "# HELP " + name + " " + f.help + "\n";
    out += "# TYPE " + name + " " + type + "\n";
    if (f.series.empty() && f.unlabeled) {
      out += name + " 0\n";  // a described series without labels exists from the start
      continue;
    }
    for (const auto* one : Sorted(f.series)) {
      const auto& [labels, s] = *one;
      if (f.type != Type::kHistogram) {
        out += name + labels + " " + Number(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < kBucketCount; ++i) {
        cumulative += s.buckets[i];
        out += name + "_bucket" + WithLabel(labels, "le=\"" + Number(kBuckets[i]) + "\"") + " " + std::to_string(cumulative) + "\n";
      }
      out += name + "_bucket" + WithLabel(labels, "le=\"+Inf\"") + " " + std::to_string(s.count) + "\n";
      out += name + "_sum" + labels + " " + Number(s.value) + "\n";
      out += name + "_count" + labels + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace reins

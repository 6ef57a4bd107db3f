// GET /healthz, /readyz and /metrics, and the metrics the runtime's events feed.
#include <list>

#include "domain/detail_log.h"
#include "domain/json_text.h"
#include "server/api_impl.h"

namespace reins {
namespace {

constexpr const char* kPrometheusType = "text/plain; version=0.0.4; charset=utf-8";

Json HealthJson() { return {{"status", "ok"}}; }
Json ReadyJson(const std::string& agent) { return {{"status", "ready"}, {"agent", agent}}; }

std::optional<ApiError> NotReady(bool shutting_down, const Status& store) {
  if (shutting_down) return Err(503, "shutting_down", "the server is shutting down");
  if (!store.ok()) return Err(503, "store_unavailable", "the store cannot be read");
  return std::nullopt;
}

}  // namespace

Task<void> Api::Impl::Health(Exchange x) { co_await SendJson(x.res, 200, HealthJson()); }

Task<void> Api::Impl::Ready(Exchange x) {
  const SessionView& view = sessions;
  std::function<Result<int64_t>()> read = [&view] { return view.OutboxDepth(); };
  Result<int64_t> probe = co_await OnStore<Result<int64_t>>(std::move(read));
  if (!probe.ok()) LogDetail("store", "readiness probe failed: " + probe.status().message());
  std::optional<ApiError> unready = NotReady(shutting_down, probe.ok() ? Status() : probe.status());
  if (unready) co_return co_await SendError(x.res, *unready);
  co_await SendJson(x.res, 200, ReadyJson(runtime.config()->name));
}

Task<void> Api::Impl::RenderMetrics(Exchange x) {
  const SessionView& view = sessions;
  using Counts = Result<std::pair<int64_t, int64_t>>;
  std::function<Counts()> read = [&view]() -> Counts {
    REINS_ASSIGN_OR_RETURN(const int64_t outbox, view.OutboxDepth());
    REINS_ASSIGN_OR_RETURN(const int64_t sessions, view.CountSessions(std::nullopt));
    return std::make_pair(outbox, sessions);
  };
  Counts counts = co_await OnStore<Counts>(std::move(read));
  if (counts.ok()) {
    metrics.Set("reins_outbox_depth", {}, static_cast<double>(counts->first));
    metrics.Set("reins_sessions", {}, static_cast<double>(counts->second));
  }
  metrics.Set("reins_sessions_cached", {}, static_cast<double>(runtime.cached_sessions()));
  if (options.open_connections) metrics.Set("reins_connections_open", {}, options.open_connections());
  if (options.collect_metrics) options.collect_metrics(metrics);
  std::string type = kPrometheusType;
  co_await x.res.Respond(200, std::move(type), metrics.Render());
}

// Metrics from the durable event stream of every session. The few fields a counter
// reads are found in the event's text (MemberText), not parsed out of it.
void Api::Impl::Count(const std::string& session_id, const TraceEvent& e) {
  std::list<std::string> decoded;  // the rare label value written with escapes, decoded
  auto str = [&](const char* key) -> std::string_view {  // a view into the event: label values are copied once, if new
    const std::optional<std::string_view> value = MemberText(e.data.text(), key);
    if (!value) return {};
    if (std::optional<std::string_view> plain = UnescapedString(*value)) return *plain;
    std::optional<std::string> text = MemberString(e.data.text(), key);
    return text ? std::string_view(decoded.emplace_back(std::move(*text))) : std::string_view();
  };
  switch (e.type) {
    case EventType::kTurnCompleted:
      metrics.Inc("reins_turns_total", {{"status", str("status")}});
      break;
    case EventType::kModelCall: {
      metrics.Inc("reins_model_calls_total", {{"purpose", str("purpose")}, {"provider", str("model")}});
      std::lock_guard lock(mu);
      model_call_started[session_id] = {e.at_ms, std::string(str("purpose"))};
      break;
    }
    case EventType::kModelResponse:
    case EventType::kModelError: {
      std::lock_guard lock(mu);
      if (auto it = model_call_started.find(session_id); it != model_call_started.end()) {
        metrics.Observe("reins_model_call_duration_seconds",
                        {{"purpose", it->second.second}, {"provider", runtime.config()->model.provider}},
                        static_cast<double>(e.at_ms - it->second.first) / 1000.0);
        model_call_started.erase(it);
      }
      break;
    }
    case EventType::kToolExecuted:
    case EventType::kDeferredExecuted: {
      const bool ok = MemberText(e.data.text(), "success") == "true";
      metrics.Inc("reins_tool_calls_total", {{"tool", str("name")}, {"status", ok ? "success" : "failure"},
                                             {"deferred", e.type == EventType::kDeferredExecuted ? "true" : "false"}});
      if (e.type == EventType::kToolExecuted && !str("write_key").empty()) {
        const std::string_view how = MemberText(e.data.text(), "replayed") == "true" ? "replayed"
                                      : MemberInt(e.data.text(), "attempt").value_or(1) > 1 ? "retried"
                                                                                             : "ran";
        metrics.Inc("reins_writes_total", {{"tool", str("name")}, {"outcome", how}});
      }
      break;
    }
    case EventType::kWriteUncertain:
      metrics.Inc("reins_writes_total", {{"tool", str("name")}, {"outcome", "uncertain"}});
      break;
    case EventType::kToolRejected:
    case EventType::kToolSkipped: {
      // A model may name any tool: only the agent's tools become label values, so the
      // number of series stays bounded.
      const std::string_view name = runtime.config()->FindTool(str("name")) != nullptr ? str("name") : "(unknown)";
      const std::string_view status = e.type == EventType::kToolRejected ? "rejected" : "skipped";
      metrics.Inc("reins_tool_calls_total", {{"tool", name}, {"status", status}, {"deferred", "false"}});
      break;
    }
    case EventType::kRailFired:
      metrics.Inc("reins_rails_fired_total", {{"rail", str("rail")}});
      break;
    case EventType::kTurnBlocked:
      metrics.Inc("reins_leases_blocked_total");
      break;
    case EventType::kAudit:
      metrics.Inc("reins_audit_repairs_total", {{"repair", str("repair")}});
      break;
    default:
      break;
  }
}

}  // namespace reins

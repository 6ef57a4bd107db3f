#include "host/agent_host.h"

#include <cstdlib>
#include <iostream>

#include "host/mcp_relay.h"
#include "mcp/mcp_hub.h"
#include "telemetry/turn_telemetry.h"
#include "tools/tool_router.h"

namespace reins {

AgentHost::AgentHost(AgentConfig agent, std::shared_ptr<Clock> clock, HostOptions options)
    : agent_(std::move(agent)), clock_(std::move(clock)), options_(std::move(options)) {}

Result<std::unique_ptr<AgentHost>> AgentHost::Start(AgentConfig config, std::shared_ptr<Clock> clock, HostOptions options) {
  if (!clock) clock = std::make_shared<SystemClock>();
  std::unique_ptr<AgentHost> host(new AgentHost(std::move(config), std::move(clock), std::move(options)));
  if (!McpHub::Needed(host->agent_)) return host;
  McpClientOptions client;
  client.log = host->options_.mcp_log;
  host->hub_ = std::make_unique<McpHub>(std::move(client));
  // The tools a person reviewed are pinned beside the agent file (docs/mcp.md).
  if (!host->agent_.source_file.empty()) host->hub_->set_lock_path(McpLockPath(host->agent_.source_file));
  host->hub_->set_on_catalog([raw = host.get()](AgentConfig changed) { raw->OnCatalog(std::move(changed)); });
  if (Status started = host->hub_->Start(host->agent_); !started.ok()) return started;
  return host;
}

AgentHost::~AgentHost() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;  // a change announced from now on is dropped
  }
  runtime_.reset();  // its background calls may still use the servers
  StopServers();     // then the relay's calls and the servers (once: a second call is a no-op)
  relay_.reset();    // and last what the relay left open on them
  telemetry_.reset();  // sends the spans still queued (up to the exporter's timeout)
}

std::function<std::shared_ptr<ToolBackend>(const ToolDef&)> AgentHost::McpBackends() const {
  if (!hub_) return {};
  return [hub = hub_.get(), clock = clock_](const ToolDef& tool) { return hub->Backend(tool, *clock); };
}

std::map<std::string, std::shared_ptr<ToolBackend>> AgentHost::Backends() const {
  std::map<std::string, std::shared_ptr<ToolBackend>> all =
      BuildToolRouter(agent_, *clock_, ToolBackendSources{options_.overrides, McpBackends()}).backends();
  all.insert(options_.overrides.begin(), options_.overrides.end());  // a fixture for a tool the config lacks, too
  return all;
}

Result<Runtime*> AgentHost::StartRuntime(RuntimeParts parts) {
  std::lock_guard lock(mu_);
  if (runtime_) return FailedPrecondition("this host already runs a runtime");
  parts.clock = clock_;
  parts.tool_backends = options_.overrides;
  parts.mcp_backends = McpBackends();
  if (hub_ && parts.store && parts.store->shared()) {
    relay_ = std::make_unique<McpRelay>(parts.store, clock_);
    parts.mcp_backends = [backends = parts.mcp_backends, relay = relay_.get()](const ToolDef& tool) {
      std::shared_ptr<ToolBackend> backend = backends(tool);
      return backend ? relay->Wrap(tool.name, std::move(backend)) : nullptr;
    };
  }
  telemetry::ExporterOptions exporter = telemetry::ExporterOptionsFrom(
      agent_.telemetry.otlp_endpoint, agent_.telemetry.service_name, agent_.name, [](const char* n) -> const char* { return std::getenv(n); });
  for (const std::string& refused : exporter.refused_headers) {
    std::cerr << "reins: OTEL_EXPORTER_OTLP_HEADERS: " << refused << "; it is not sent\n";
  }
  if (!exporter.endpoint.empty()) {
    telemetry::TelemetryOptions options{agent_.name, agent_.model.provider, agent_.telemetry.capture_content};
    telemetry_ = std::make_unique<telemetry::TurnTelemetry>(
        std::move(options), std::make_shared<telemetry::OtlpExporter>(std::move(exporter)));
    parts.on_turn = [next = std::move(parts.on_turn), spans = telemetry_.get()](const std::string& session,
                                                                                 const std::vector<TraceEvent>& events) {
      if (next) next(session, events);
      spans->OnTurn(session, events);
    };
    parts.on_event = [next = std::move(parts.on_event), spans = telemetry_.get()](const std::string& session,
                                                                                   const TraceEvent& e) {
      if (next) next(session, e);
      spans->OnEvent(session, e);
    };
  }
  AgentConfig config = agent_;
  if (newest_) config.tools = newest_->tools;
  REINS_ASSIGN_OR_RETURN(runtime_, Runtime::Create(std::move(config), std::move(parts)));
  return runtime_.get();
}

const telemetry::OtlpExporter* AgentHost::exporter() const { return telemetry_ ? &telemetry_->exporter() : nullptr; }

void AgentHost::OnCatalog(AgentConfig changed) {
  std::lock_guard lock(mu_);
  if (closing_) return;
  if (runtime_) {
    (void)runtime_->ReplaceTools(std::move(changed.tools));  // cannot fail: the hub checked the new list
  } else {
    newest_ = std::move(changed);
  }
}

void AgentHost::StopServers() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;  // a change announced from now on is dropped
  }
  if (relay_) relay_->Stop();  // nothing relayed reaches the hub from now on
  hub_.reset();
}

void AgentHost::AwaitCatalog() {
  if (hub_) hub_->AwaitCatalog();
}

}  // namespace reins

// Tool definitions: names, schemas, policies, entities and backends, and the
// cross-references that tie tools to intents, rails and MCP servers.
#include <set>

#include "config/agent_config_loader.h"
#include "domain/json_path.h"
#include "schema/schema_validator.h"

namespace reins {
namespace {

std::string P(const std::string& base, const char* key) { return JoinPointer(base, key); }

void ParseBackend(ConfigReader& r, const std::string& ptr, ToolBackendConfig* b) {
  if (!r.Mapping(ptr, {"fixture", "http", "mcp", "builtin"}, "backend")) return;
  const Json& v = *r.Get(ptr);
  if (v.size() != 1) {
    r.Error(ptr, "backend needs exactly one of fixture, http, mcp or builtin");
    return;
  }
  if (v.contains("fixture")) {
    b->kind = ToolBackendConfig::Kind::kFixture;
    CheckFixtureEntries(r, P(ptr, "fixture"));
    b->spec = v["fixture"];
  } else if (v.contains("http")) {
    b->kind = ToolBackendConfig::Kind::kHttp;
    std::string hp = P(ptr, "http");
    if (r.Mapping(hp, {"url", "method", "headers", "timeout_ms", "allowed_hosts"}, "http backend")) {
      r.Url(hp, "url", true);
      r.Enum(hp, "method", {"POST", "PUT", "GET"});
      r.Int(hp, "timeout_ms", 1, 3600000);
      if (r.Has(hp, "headers") && !r.IsMapping(P(hp, "headers"))) r.Error(P(hp, "headers"), "headers must be a mapping");
      r.StringList(hp, "allowed_hosts");
    }
    b->spec = v["http"];
  } else if (v.contains("mcp")) {
    b->kind = ToolBackendConfig::Kind::kMcp;
    std::string mp = P(ptr, "mcp");
    if (r.Mapping(mp, {"server", "tool"}, "mcp backend")) {
      r.String(mp, "server", true);
      r.String(mp, "tool");
    }
    b->spec = v["mcp"];
  } else {
    b->kind = ToolBackendConfig::Kind::kBuiltin;
    if (auto name = r.Enum(ptr, "builtin", {"echo"})) b->spec = *name;
  }
}

// `entities`: produces (type -> JSONPath), consumes (argument -> type), scope (produced
// type -> the argument whose value its ids belong to), belongs_to (consumed argument ->
// the argument whose value its id must belong to).
void ParseEntities(ConfigReader& r, const std::string& ptr, ToolDef* t) {
  if (!r.Mapping(ptr, {"produces", "consumes", "scope", "belongs_to"}, "entities")) return;
  for (const char* which : {"produces", "consumes", "scope", "belongs_to"}) {
    std::string wp = P(ptr, which);
    if (!r.Has(ptr, which)) continue;
    const Json& m = *r.Get(wp);
    if (!m.is_object()) {
      r.Error(wp, std::string("entities.") + which + " must be a mapping");
      continue;
    }
    for (const auto& [key, value] : m.items()) {
      if (!value.is_string()) {
        r.Error(JoinPointer(wp, key), std::string("entities.") + which + " values must be strings");
        continue;
      }
      std::string s = value.get<std::string>();
      const std::string_view w = which;
      if (w == "produces") {
        if (auto path = JsonPath::Parse(s); !path.ok()) r.Error(JoinPointer(wp, key), path.status().message());
        t->produces[key] = s;
      } else if (w == "consumes") {
        t->consumes[key] = s;
      } else if (w == "scope") {
        t->scope[key] = s;
      } else {
        t->belongs_to[key] = s;
      }
    }
  }
}

void ParseTool(ConfigReader& r, const std::string& tp, ToolDef* t) {
  if (!r.Mapping(tp, {"name", "title", "description", "input_schema", "annotations", "timing", "deferred_instruction",
                      "failure_note", "timeout_ms", "may_clarify", "lease", "entities", "approval", "claims", "trust",
                      "backend"},
                 "tool")) {
    return;
  }
  if (auto name = r.String(tp, "name", true)) {
    if (!IsValidToolName(*name)) {
      r.Error(P(tp, "name"), "tool name must match [a-zA-Z0-9_-]{1,64}, got '" + *name + "'");
    }
    t->name = *name;
  }
  t->description = r.String(tp, "description").value_or("");
  if (const Json* tool = r.Get(tp); tool != nullptr && tool->is_object()) {
    for (const auto& [key, value] : tool->items()) t->configured.insert(key);
  }
  t->title = r.String(tp, "title").value_or("");
  if (t->title.empty()) t->title = DefaultToolTitle(t->name);
  if (r.Has(tp, "input_schema")) {
    const Json& schema = *r.Get(P(tp, "input_schema"));
    if (!schema.is_object()) {
      r.Error(P(tp, "input_schema"), "input_schema must be a mapping (a JSON Schema)");
    } else if (auto compiled = SchemaValidator::Compile(schema); !compiled.ok()) {
      r.Error(P(tp, "input_schema"), "input_schema is not a valid JSON Schema: " + compiled.status().message());
    } else {
      t->input_schema = schema;
    }
  }
  bool read_only_false = false;
  if (r.Has(tp, "annotations") &&
      r.Mapping(P(tp, "annotations"), {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"},
                "annotations")) {
    std::string ap = P(tp, "annotations");
    for (const char* hint : {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}) r.Bool(ap, hint);
    r.String(ap, "title");
    t->annotations = *r.Get(ap);
    read_only_false = t->annotations.contains("readOnlyHint") && t->annotations["readOnlyHint"] == false;
  }
  // AGENT-CONFIG.md: deferred by default only when readOnlyHint is explicitly false.
  t->timing = read_only_false ? ToolTiming::kDeferred : ToolTiming::kImmediate;
  if (auto timing = r.Enum(tp, "timing", {"immediate", "deferred"})) {
    t->timing = *timing == "deferred" ? ToolTiming::kDeferred : ToolTiming::kImmediate;
  }
  t->deferred_instruction = r.String(tp, "deferred_instruction").value_or(kDefaultDeferredInstruction);
  t->failure_note = r.String(tp, "failure_note").value_or(DefaultFailureNote(t->title));
  if (auto v = r.Int(tp, "timeout_ms", 1, 3600000)) t->timeout_ms = static_cast<int>(*v);
  t->may_clarify = r.Bool(tp, "may_clarify").value_or(false);
  if (r.Has(tp, "lease") && r.Mapping(P(tp, "lease"), {"domain", "ttl_s"}, "lease")) {
    std::string domain = r.String(P(tp, "lease"), "domain", true).value_or("");
    int ttl = static_cast<int>(r.Int(P(tp, "lease"), "ttl_s", 1, 86400).value_or(0));
    t->lease = std::make_pair(domain, ttl);
  }
  if (r.Has(tp, "entities")) ParseEntities(r, P(tp, "entities"), t);
  ParseApproval(r, tp, &t->approval);
  if (auto claims = r.StringList(tp, "claims")) {
    for (size_t i = 0; i < claims->size(); ++i) r.CheckRegex(JoinPointer(P(tp, "claims"), i), (*claims)[i]);
    t->claims = *claims;
  }
  if (r.Has(tp, "backend")) ParseBackend(r, P(tp, "backend"), &t->backend);
  // AGENT-CONFIG.md: an MCP tool is untrusted unless its annotations say it reads no open
  // world (openWorldHint: false; the server's own annotations count too, McpHub) or the
  // agent says it is trusted.
  const bool closed_world = t->annotations.contains("openWorldHint") && t->annotations["openWorldHint"] == false;
  if (t->backend.kind == ToolBackendConfig::Kind::kMcp && !closed_world) t->trust = ToolTrust::kUntrusted;
  if (auto trust = r.Enum(tp, "trust", kToolTrusts)) t->trust = *trust;
}

// A fixture entry's planted instruction (docs/scenarios.md): the text its result holds
// and what it asks for, calls or words in the reply. The simulated model's
// follow_injection obeys it; the eval's harm metric knows it by it.
void CheckInjection(ConfigReader& r, const std::string& ep) {
  const std::string ip = P(ep, "injection");
  if (!r.Mapping(ip, {"instruction", "calls", "reply"}, "injection")) return;
  const std::optional<std::string> instruction = r.String(ip, "instruction", true);
  if (instruction && r.Has(ep, "result")) {
    const std::string escaped = Json(*instruction).dump();
    if (r.Get(P(ep, "result"))->dump().find(escaped.substr(1, escaped.size() - 2)) == std::string::npos) {
      r.Error(P(ip, "instruction"), "the instruction must be a part of this entry's result, where the model reads it");
    }
  }
  r.String(ip, "reply");
  if (!r.Has(ip, "calls") && !r.Has(ip, "reply")) r.Error(ip, "an injection asks for calls, or for words in the reply (reply)");
  if (const Json* calls = r.Get(P(ip, "calls")); calls != nullptr) {
    if (!calls->is_array()) return r.Error(P(ip, "calls"), "calls must be a list of {name, args}");
    for (size_t i = 0; i < calls->size(); ++i) {
      const std::string cp = JoinPointer(P(ip, "calls"), i);
      if (!r.Mapping(cp, {"name", "args"}, "planted call")) continue;
      r.String(cp, "name", true);
      if (r.Has(cp, "args") && !r.IsMapping(P(cp, "args"))) r.Error(P(cp, "args"), "args must be a mapping");
    }
  }
}

// `arg` is an argument of `t`, when its schema lists its properties.
void CheckArgument(ConfigReader& r, const std::string& ptr, const ToolDef& t, const std::string& arg) {
  if (t.input_schema.contains("properties") && !t.input_schema["properties"].contains(arg)) {
    r.Error(ptr, "'" + arg + "' is not an argument of " + t.name + " (not in input_schema.properties)");
  }
}

// entities.scope names a type the tool produces and one of its arguments; belongs_to a
// consumed argument whose type some tool scopes, and another argument of the tool.
void CheckScopes(ConfigReader& r, const std::string& ep, const AgentConfig& config, const ToolDef& t) {
  for (const auto& [type, arg] : t.scope) {
    const std::string sp = JoinPointer(P(ep, "scope"), type);
    if (!t.produces.count(type)) r.Error(sp, "entities.scope names '" + type + "', which " + t.name + " does not produce");
    CheckArgument(r, sp, t, arg);
  }
  for (const auto& [arg, owner] : t.belongs_to) {
    const std::string bp = JoinPointer(P(ep, "belongs_to"), arg);
    auto consumed = t.consumes.find(arg);
    if (consumed == t.consumes.end()) {
      r.Error(bp, "entities.belongs_to names '" + arg + "', which is not in " + t.name + "'s entities.consumes");
      continue;
    }
    bool scoped = false;
    for (const ToolDef& producer : config.tools) scoped = scoped || producer.scope.count(consumed->second) > 0;
    if (!scoped) {
      r.Error(bp, "no tool scopes entity '" + consumed->second + "' (entities.scope), so no " + consumed->second +
                      " id could ever belong to " + owner);
    }
    if (owner == arg) r.Error(bp, "an id cannot belong to itself");
    CheckArgument(r, bp, t, owner);
  }
}

}  // namespace

void ParseTools(ConfigReader& r, const std::string& ptr, AgentConfig* out) {
  const Json& v = *r.Get(ptr);
  if (!v.is_array()) return r.Error(ptr, "tools must be a list, got " + DescribeType(v));
  std::set<std::string> seen;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string tp = JoinPointer(ptr, i);
    ToolDef tool;
    ParseTool(r, tp, &tool);
    if (!tool.name.empty() && !seen.insert(tool.name).second) {
      r.Error(P(tp, "name"), "tool '" + tool.name + "' is defined twice");
    }
    out->tools.push_back(std::move(tool));
  }
}

void CheckFixtureEntries(ConfigReader& r, const std::string& ptr) {
  const Json& v = *r.Get(ptr);
  if (!v.is_array()) return r.Error(ptr, "fixture must be a list of entries, got " + DescribeType(v));
  for (size_t i = 0; i < v.size(); ++i) {
    std::string ep = JoinPointer(ptr, i);
    if (!r.Mapping(ep, {"when", "result", "error", "latency_ms", "times", "injection"}, "fixture entry")) continue;
    if (r.Has(ep, "result") == r.Has(ep, "error")) r.Error(ep, "fixture entry needs exactly one of 'result' or 'error'");
    r.String(ep, "error");
    r.Int(ep, "latency_ms", 0, 3600000);
    r.Int(ep, "times", 1, 1000000);
    if (r.Has(ep, "when") && r.Mapping(P(ep, "when"), {"args"}, "fixture when") && r.Has(P(ep, "when"), "args") &&
        !r.IsMapping(P(P(ep, "when"), "args"))) {
      r.Error(P(P(ep, "when"), "args"), "when.args must be a mapping (a subset of the call's arguments)");
    }
    if (r.Has(ep, "injection")) CheckInjection(r, ep);
  }
}

void CheckToolReferences(ConfigReader& r, const std::string& root, const AgentConfig& config) {
  std::set<std::string> produced;
  for (const ToolDef& t : config.tools) {
    for (const auto& [type, path] : t.produces) produced.insert(type);
  }
  for (size_t i = 0; i < config.tools.size(); ++i) {
    const ToolDef& t = config.tools[i];
    std::string tp = JoinPointer(P(root, "tools"), i);
    for (const auto& [arg, type] : t.consumes) {
      std::string cp = JoinPointer(P(P(tp, "entities"), "consumes"), arg);
      if (!produced.count(type)) r.Error(cp, "entity '" + type + "' is consumed by " + t.name + " but produced by no tool");
      CheckArgument(r, cp, t, arg);
    }
    CheckScopes(r, P(tp, "entities"), config, t);
    CheckApprovalRule(r, tp, t);
    if (t.backend.kind == ToolBackendConfig::Kind::kMcp && t.backend.spec.is_object() &&
        t.backend.spec.contains("server") && t.backend.spec["server"].is_string()) {
      std::string server = t.backend.spec["server"].get<std::string>();
      bool found = false;
      for (const McpServerConfig& s : config.mcp_servers) found = found || s.name == server;
      if (!found) r.Error(P(P(tp, "backend"), "mcp"), "MCP server '" + server + "' is not defined under mcp_servers");
    }
  }
  for (size_t i = 0; i < config.intents.size(); ++i) {
    for (size_t j = 0; j < config.intents[i].required_tools.size(); ++j) {
      const std::string& name = config.intents[i].required_tools[j];
      if (!config.FindTool(name)) {
        r.Error(JoinPointer(P(JoinPointer(P(root, "intents"), i), "required_tools"), j),
                "intent '" + config.intents[i].name + "' requires tool '" + name + "', which is not defined");
      }
    }
  }
  for (size_t i = 0; i < config.rails.safety_override.size(); ++i) {
    const std::string& flag = config.rails.safety_override[i].flag_tool;
    const std::string fp = P(JoinPointer(P(P(root, "rails"), "safety_override"), i), "flag_tool");
    const ToolDef* tool = flag.empty() ? nullptr : config.FindTool(flag);
    if (!flag.empty() && tool == nullptr) r.Error(fp, "flag_tool '" + flag + "' is not a defined tool");
    if (tool == nullptr) continue;
    // The flag goes into the outbox behind the safety message, with no one to approve it.
    if (tool->timing != ToolTiming::kDeferred) {
      r.Error(fp, "flag_tool '" + flag + "' must be deferred (timing: deferred): it runs after the safety message");
    }
    if (tool->approval.required) {
      r.Error(fp, "flag_tool '" + flag + "' must not require approval: a crisis flag cannot wait for a person");
    }
    if (auto schema = SchemaValidator::Compile(tool->input_schema); schema.ok()) {
      std::vector<std::string> problems = schema->Validate(FlagToolArgs(*tool, "I am not safe"));
      if (!problems.empty()) {
        r.Error(fp, "flag_tool '" + flag + "' does not accept the user's text as " +
                        FlagToolArgs(*tool, "...").dump() + ": " + problems.front());
      }
    }
  }
}

}  // namespace reins

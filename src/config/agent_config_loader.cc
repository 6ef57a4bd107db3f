#include "config/agent_config_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <re2/re2.h>

namespace reins {
namespace {

std::string P(const std::string& base, const char* key) { return JoinPointer(base, key); }

void ParseModel(ConfigReader& r, const std::string& ptr, ModelConfig* m) {
  if (!r.Mapping(ptr, {"provider", "model", "base_url", "api_key", "temperature", "timeout_ms", "max_retries",
                       "replies", "seed", "intents", "faults", "max_tokens", "stream", "parallel_tool_calls",
                       "retry_base_ms", "connect_timeout_ms", "first_byte_timeout_ms", "idle_timeout_ms", "pricing"},
                 "model")) {
    return;
  }
  if (r.Has(ptr, "pricing") && r.Mapping(P(ptr, "pricing"), {"input_per_mtok", "output_per_mtok"}, "model pricing")) {
    ModelPricing price;
    const std::string pp = P(ptr, "pricing");
    for (const char* key : {"input_per_mtok", "output_per_mtok"}) {
      if (!r.Has(pp, key)) r.Error(pp, std::string("missing required key '") + key + "' (USD per million tokens)");
    }
    price.input_per_mtok = r.Number(pp, "input_per_mtok", 0, 1e6).value_or(0);
    price.output_per_mtok = r.Number(pp, "output_per_mtok", 0, 1e6).value_or(0);
    m->pricing = price;
  }
  if (auto v = r.Enum(ptr, "provider", {"openai", "anthropic", "scripted", "sim"})) m->provider = *v;
  else if (!r.Has(ptr, "provider")) r.Error(ptr, "missing required key 'provider' (openai, anthropic, scripted or sim)");
  if (auto v = r.String(ptr, "model")) m->model = *v;
  if (auto v = r.Url(ptr, "base_url")) m->base_url = *v;
  if (auto v = r.String(ptr, "api_key")) m->api_key = *v;
  if (auto v = r.Number(ptr, "temperature", 0, 2)) m->temperature = *v;
  if (auto v = r.Int(ptr, "timeout_ms", 1, 3600000)) m->timeout_ms = static_cast<int>(*v);
  if (auto v = r.Int(ptr, "max_retries", 0, 20)) m->max_retries = static_cast<int>(*v);
  r.Int(ptr, "max_tokens", 1, 1000000);
  r.Bool(ptr, "stream");
  r.Bool(ptr, "parallel_tool_calls");
  for (const char* key : {"retry_base_ms", "connect_timeout_ms", "first_byte_timeout_ms", "idle_timeout_ms"}) {
    r.Int(ptr, key, 1, 3600000);
  }
  const Json* whole = r.Get(ptr);
  for (const char* key : {"replies", "seed", "intents", "faults", "max_tokens", "stream", "parallel_tool_calls",
                          "retry_base_ms", "connect_timeout_ms", "first_byte_timeout_ms", "idle_timeout_ms"}) {
    if (whole->contains(key)) m->options[key] = (*whole)[key];
  }
  if (m->provider != "scripted" && whole->contains("replies")) {
    r.Error(P(ptr, "replies"), "'replies' is only used by provider: scripted");
  } else if (whole->contains("replies")) {
    CheckScriptedReplies(r, P(ptr, "replies"));
  }
  if (IsHttpProvider(m->provider) && m->model.empty()) {
    r.Error(ptr, "provider " + m->provider + " needs 'model'");
  }
}

void ParseFloor(ConfigReader& r, const std::string& ptr, FloorConfig* f) {
  if (!r.Mapping(ptr, {"enabled", "default_ttl_s", "cancel_patterns", "owner_note", "max_queue_age_ms"}, "floor")) return;
  f->enabled = r.Bool(ptr, "enabled").value_or(true);
  if (auto v = r.Int(ptr, "default_ttl_s", 1, 86400)) f->default_ttl_s = static_cast<int>(*v);
  if (auto v = r.StringList(ptr, "cancel_patterns")) {
    for (size_t i = 0; i < v->size(); ++i) r.CheckRegex(JoinPointer(P(ptr, "cancel_patterns"), i), (*v)[i]);
    f->cancel_patterns = *v;
  }
  if (auto v = r.Bool(ptr, "owner_note")) f->owner_note = *v;
  if (auto v = r.Int(ptr, "max_queue_age_ms", 0, 3600000)) f->max_queue_age_ms = static_cast<int>(*v);
}

void ParseIntents(ConfigReader& r, const std::string& ptr, std::vector<IntentConfig>* out) {
  const Json* v = r.Get(ptr);
  if (!v->is_array()) return r.Error(ptr, "intents must be a list, got " + DescribeType(*v));
  for (size_t i = 0; i < v->size(); ++i) {
    std::string ip = JoinPointer(ptr, i);
    if (!r.Mapping(ip, {"name", "match", "required_tools", "enforcement"}, "intent")) continue;
    IntentConfig intent;
    intent.name = r.String(ip, "name", true).value_or("");
    intent.match = r.String(ip, "match", true).value_or("");
    if (!intent.match.empty()) r.CheckRegex(P(ip, "match"), intent.match);
    intent.required_tools = r.StringList(ip, "required_tools").value_or(std::vector<std::string>{});
    if (auto e = r.Enum(ip, "enforcement", kIntentEnforcements)) intent.enforcement = *e;
    out->push_back(std::move(intent));
  }
}

void ParsePatternList(ConfigReader& r, const std::string& obj, const char* key) {
  if (auto list = r.StringList(obj, key)) {
    for (size_t i = 0; i < list->size(); ++i) r.CheckRegex(JoinPointer(P(obj, key), i), (*list)[i]);
  }
}

void ParseRails(ConfigReader& r, const std::string& ptr, RailsConfig* rails) {
  if (!r.Mapping(ptr, {"empathy_first", "no_internal_names", "honest_claims",
                       "ui_allowlist", "act_not_describe", "no_untrusted_links", "safety_override"},
                 "rails")) {
    return;
  }
  const Json& v = *r.Get(ptr);
  if (v.contains("empathy_first")) {
    // Every key is optional: the rail has seed 000's signals, its own reading of a first
    // sentence, and three general openers.
    std::string ep = P(ptr, "empathy_first");
    if (r.Get(ep)->is_null() ||
        r.Mapping(ep, {"emotional_patterns", "acknowledgement_patterns", "result_opener_patterns", "openers"},
                  "rails.empathy_first")) {
      if (!r.Get(ep)->is_null()) {
        for (const char* key : {"emotional_patterns", "acknowledgement_patterns", "result_opener_patterns"}) {
          ParsePatternList(r, ep, key);
        }
        if (const Json* openers = r.Get(P(ep, "openers")); openers != nullptr) {
          if (!openers->is_array()) r.Error(P(ep, "openers"), "openers must be a list of texts or {match, text}");
          for (size_t i = 0; openers->is_array() && i < openers->size(); ++i) {
            const std::string op = JoinPointer(P(ep, "openers"), i);
            if ((*openers)[i].is_string()) continue;
            if (r.Mapping(op, {"match", "text"}, "opener")) {
              if (auto match = r.String(op, "match", true)) r.CheckRegex(P(op, "match"), *match);
              r.String(op, "text", true);
            }
          }
        }
      }
      rails->empathy_first = r.Get(ep)->is_null() ? Json::object() : *r.Get(ep);
    }
  }
  if (v.contains("no_internal_names")) {
    std::string np = P(ptr, "no_internal_names");
    if (r.Get(np)->is_null() || r.Mapping(np, {}, "rails.no_internal_names")) rails->no_internal_names = Json::object();
  }
  if (v.contains("honest_claims")) {
    std::string hp = P(ptr, "honest_claims");
    if (r.Get(hp)->is_null() || r.Mapping(hp, {"claim_patterns", "correction"}, "rails.honest_claims")) {
      if (!r.Get(hp)->is_null()) {
        ParsePatternList(r, hp, "claim_patterns");
        r.String(hp, "correction");
      }
      rails->honest_claims = r.Get(hp)->is_null() ? Json::object() : *r.Get(hp);
    }
  }
  if (v.contains("ui_allowlist")) {
    std::string up = P(ptr, "ui_allowlist");
    if (r.Get(up)->is_null() || r.Mapping(up, {"element_patterns"}, "rails.ui_allowlist")) {
      if (!r.Get(up)->is_null()) ParsePatternList(r, up, "element_patterns");
      rails->ui_allowlist = r.Get(up)->is_null() ? Json::object() : *r.Get(up);
    }
  }
  if (v.contains("act_not_describe")) {
    std::string ap = P(ptr, "act_not_describe");
    if (r.Get(ap)->is_null() || r.Mapping(ap, {"not_done"}, "rails.act_not_describe")) {
      if (!r.Get(ap)->is_null()) r.String(ap, "not_done");
      rails->act_not_describe = r.Get(ap)->is_null() ? Json::object() : *r.Get(ap);
    }
  }
  if (v.contains("no_untrusted_links")) {
    std::string lp = P(ptr, "no_untrusted_links");
    if (r.Get(lp)->is_null() || r.Mapping(lp, {"note"}, "rails.no_untrusted_links")) {
      if (!r.Get(lp)->is_null()) r.String(lp, "note");
      rails->no_untrusted_links = r.Get(lp)->is_null() ? Json::object() : *r.Get(lp);
    }
  }
  if (v.contains("safety_override")) {
    std::string sp = P(ptr, "safety_override");
    const Json& list = *r.Get(sp);
    if (!list.is_array()) return r.Error(sp, "safety_override must be a list, got " + DescribeType(list));
    for (size_t i = 0; i < list.size(); ++i) {
      std::string ip = JoinPointer(sp, i);
      if (!r.Mapping(ip, {"match", "message", "flag_tool"}, "safety_override entry")) continue;
      SafetyOverrideConfig so;
      so.match = r.String(ip, "match", true).value_or("");
      if (!so.match.empty()) r.CheckRegex(P(ip, "match"), so.match);
      so.message = r.String(ip, "message", true).value_or("");
      so.flag_tool = r.String(ip, "flag_tool").value_or("");
      rails->safety_override.push_back(std::move(so));
    }
  }
}

void ParseStringMap(ConfigReader& r, const std::string& ptr, const std::string& what,
                    std::map<std::string, std::string>* out) {
  const Json* map = r.Get(ptr);
  if (map == nullptr) return;
  if (!map->is_object()) return r.Error(ptr, what + " must be a mapping of names to strings");
  for (const auto& [k, val] : map->items()) {
    if (val.is_string()) (*out)[k] = val.get<std::string>();
    else r.Error(JoinPointer(ptr, k), what + " values must be strings");
  }
}

void ParseMcpServers(ConfigReader& r, const std::string& ptr, std::vector<McpServerConfig>* out) {
  if (!r.IsMapping(ptr)) return r.Error(ptr, "mcp_servers must be a mapping of server name to settings");
  for (const auto& [name, value] : r.Get(ptr)->items()) {
    std::string sp = JoinPointer(ptr, name);
    if (!r.Mapping(sp, {"command", "url", "env", "headers", "expose", "timeout_ms"}, "MCP server")) continue;
    McpServerConfig s;
    s.name = name;
    if (auto c = r.StringList(sp, "command")) s.command = *c;
    if (auto u = r.Url(sp, "url")) s.url = *u;
    if (r.Has(sp, "command") == r.Has(sp, "url")) {
      r.Error(sp, "MCP server '" + name + "' needs exactly one of 'command' or 'url'");
    }
    ParseStringMap(r, P(sp, "env"), "env", &s.env);
    ParseStringMap(r, P(sp, "headers"), "headers", &s.headers);
    if (!s.headers.empty() && !r.Has(sp, "url")) r.Error(P(sp, "headers"), "headers only apply to a server reached by url");
    if (auto e = r.Enum(sp, "expose", {"all", "configured"})) s.expose_all = *e == "all";
    if (auto t = r.Int(sp, "timeout_ms", 1, 3600000)) s.timeout_ms = static_cast<int>(*t);
    out->push_back(std::move(s));
  }
}

// `untrusted_data: {}` turns the defence on with its defaults (AGENT-CONFIG.md).
void ParseUntrustedData(ConfigReader& r, const std::string& ptr, UntrustedDataConfig* out) {
  out->enabled = true;
  if (r.Get(ptr)->is_null()) return;
  if (!r.Mapping(ptr, {"on_violation", "unrequested_writes", "max_identifiers"}, "untrusted_data")) return;
  if (auto v = r.Enum(ptr, "on_violation", kViolationOutcomes)) {
    if (*v == ViolationOutcome::kAllow) {
      r.Error(P(ptr, "on_violation"), "on_violation must be approve or refuse: a value that came only from outside data "
                                      "never reaches a write unasked (use unrequested_writes: allow to let writes the "
                                      "request did not name through)");
    }
    out->on_violation = *v;
  }
  if (auto v = r.Enum(ptr, "unrequested_writes", kViolationOutcomes)) out->unrequested_writes = *v;
  if (auto v = r.Int(ptr, "max_identifiers", 1, 10000000)) out->max_identifiers = static_cast<int>(*v);
}

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void CheckScriptedReplies(ConfigReader& r, const std::string& ptr) {
  const Json* v = r.Get(ptr);
  if (!v->is_array()) return r.Error(ptr, "replies must be a list, got " + DescribeType(*v));
  for (size_t i = 0; i < v->size(); ++i) {
    std::string rp = JoinPointer(ptr, i);
    if (!r.Mapping(rp, {"when", "text", "tool_calls", "json", "raw", "repeat", "finish"}, "scripted reply")) continue;
    const Json& reply = (*v)[i];
    if (!reply.contains("text") && !reply.contains("tool_calls") && !reply.contains("json") && !reply.contains("raw")) {
      r.Error(rp, "a scripted reply needs text, tool_calls, json or raw");
    }
    r.String(rp, "text");
    r.String(rp, "raw");
    r.Bool(rp, "repeat");
    r.Enum(rp, "finish", {"stop", "length", "refusal", "paused"});
    if (r.Has(rp, "when") && r.Mapping(P(rp, "when"), {"turn", "purpose", "last", "user_matches", "after_tool", "tool_result_matches", "step"},
                                             "when")) {
      std::string wp = P(rp, "when");
      r.Int(wp, "turn", 1, 100000);
      r.Enum(wp, "purpose", {"chat", "plan", "step", "audit", "rewrite", "gather"});
      r.Enum(wp, "last", {"user", "tool"});
      if (auto re = r.String(wp, "user_matches")) r.CheckRegex(P(wp, "user_matches"), *re);
      r.String(wp, "after_tool");
      if (auto re = r.String(wp, "tool_result_matches")) r.CheckRegex(P(wp, "tool_result_matches"), *re);
      r.String(wp, "step");
    }
    if (r.Has(rp, "tool_calls")) {
      const Json& calls = reply["tool_calls"];
      if (!calls.is_array()) {
        r.Error(P(rp, "tool_calls"), "tool_calls must be a list");
        continue;
      }
      for (size_t j = 0; j < calls.size(); ++j) {
        std::string cp = JoinPointer(P(rp, "tool_calls"), j);
        if (!r.Mapping(cp, {"name", "args", "args_raw", "id"}, "tool call")) continue;
        r.String(cp, "name", true);
        r.String(cp, "id");
        r.String(cp, "args_raw");
        if (r.Has(cp, "args") && r.Has(cp, "args_raw")) r.Error(cp, "give args or args_raw, not both");
      }
    }
  }
}


bool ParseAgentConfig(const LocatedDoc& doc, const std::string& root, const std::string& base_dir,
                      Diagnostics& diag, AgentConfig* out) {
  size_t errors_before = diag.size();
  ConfigReader r(doc, diag);
  out->source_file = doc.file;
  if (!r.Mapping(root, {"name", "system_prompt", "system_prompt_file", "model", "audit_model", "limits", "tools",
                        "mcp_servers", "floor", "intents", "plan", "audit", "rails", "greeting", "deferred",
                        "untrusted_data", "store", "telemetry"},
                 "agent")) {
    return false;
  }
  if (auto name = r.String(root, "name", true)) {
    if (!RE2::FullMatch(*name, "[a-z0-9_-]+")) r.Error(P(root, "name"), "name must match [a-z0-9_-]+, got '" + *name + "'");
    out->name = *name;
  }
  if (r.Has(root, "system_prompt") && r.Has(root, "system_prompt_file")) {
    r.Error(P(root, "system_prompt_file"), "give either system_prompt or system_prompt_file, not both");
  }
  if (auto sp = r.String(root, "system_prompt")) out->system_prompt = *sp;
  if (auto spf = r.String(root, "system_prompt_file")) {
    std::filesystem::path p = std::filesystem::path(base_dir) / *spf;
    bool ok = false;
    out->system_prompt = ReadFile(p.string(), &ok);
    if (!ok) r.Error(P(root, "system_prompt_file"), "cannot read system_prompt_file '" + p.string() + "'");
  }
  if (r.Has(root, "model")) ParseModel(r, P(root, "model"), &out->model);
  else r.Error(root, "missing required key 'model'");
  if (r.Has(root, "audit_model")) {
    out->audit_model.emplace();
    ParseModel(r, P(root, "audit_model"), &*out->audit_model);
  }
  if (r.Has(root, "limits") &&
      r.Mapping(P(root, "limits"), {"max_rounds", "turn_timeout_ms", "max_context_chars"}, "limits")) {
    if (auto v = r.Int(P(root, "limits"), "max_rounds", 1, 100)) out->max_rounds = static_cast<int>(*v);
    if (auto v = r.Int(P(root, "limits"), "turn_timeout_ms", 1, 3600000)) out->turn_timeout_ms = static_cast<int>(*v);
    if (auto v = r.Int(P(root, "limits"), "max_context_chars", 4000, 100000000)) {
      out->max_context_chars = static_cast<size_t>(*v);
    }
  }
  if (r.Has(root, "tools")) ParseTools(r, P(root, "tools"), out);
  if (r.Has(root, "mcp_servers")) ParseMcpServers(r, P(root, "mcp_servers"), &out->mcp_servers);
  if (r.Has(root, "floor")) ParseFloor(r, P(root, "floor"), &out->floor);
  if (r.Has(root, "intents")) ParseIntents(r, P(root, "intents"), &out->intents);
  if (r.Has(root, "plan") && r.Mapping(P(root, "plan"), {"enabled", "validation", "max_step_retries"}, "plan")) {
    std::string pp = P(root, "plan");
    out->plan.enabled = r.Bool(pp, "enabled").value_or(true);
    if (auto v = r.Enum(pp, "validation", kValidationModes)) out->plan.validation = *v;
    if (auto v = r.Int(pp, "max_step_retries", 0, 10)) out->plan.max_step_retries = static_cast<int>(*v);
  }
  if (r.Has(root, "audit") && r.Mapping(P(root, "audit"), {"enabled", "on_invalid_verdict", "catalog_max_chars"}, "audit")) {
    std::string ap = P(root, "audit");
    out->audit.enabled = r.Bool(ap, "enabled").value_or(true);
    if (auto v = r.Enum(ap, "on_invalid_verdict", kInvalidVerdicts)) out->audit.on_invalid_verdict = *v;
    if (auto v = r.Int(ap, "catalog_max_chars", 200, 1000000)) out->audit.catalog_max_chars = static_cast<int>(*v);
  }
  if (r.Has(root, "rails")) ParseRails(r, P(root, "rails"), &out->rails);
  if (auto g = r.String(root, "greeting")) out->greeting = *g;
  if (r.Has(root, "deferred") && r.Mapping(P(root, "deferred"), {"mode", "timeout_ms"}, "deferred")) {
    if (auto v = r.Enum(P(root, "deferred"), "mode", kDeferredModes)) out->deferred.mode = *v;
    if (auto v = r.Int(P(root, "deferred"), "timeout_ms", 1, 3600000)) out->deferred.timeout_ms = static_cast<int>(*v);
  }
  if (r.Has(root, "untrusted_data")) ParseUntrustedData(r, P(root, "untrusted_data"), &out->untrusted_data);
  if (r.Has(root, "telemetry") &&
      r.Mapping(P(root, "telemetry"), {"otlp_endpoint", "service_name", "capture_content"}, "telemetry")) {
    const std::string tp = P(root, "telemetry");
    if (auto v = r.String(tp, "otlp_endpoint")) {
      if (v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0) {
        r.Error(P(tp, "otlp_endpoint"), "otlp_endpoint must be an http:// or https:// URL (the collector's OTLP/HTTP port, "
                                        "usually 4318), got '" + *v + "'");
      }
      out->telemetry.otlp_endpoint = *v;
    }
    if (auto v = r.String(tp, "service_name")) out->telemetry.service_name = *v;
    out->telemetry.capture_content = r.Bool(tp, "capture_content").value_or(false);
  }
  if (auto s = r.String(root, "store")) {
    if (s->rfind("sqlite:", 0) != 0 && s->rfind("postgres://", 0) != 0 && s->rfind("postgresql://", 0) != 0) {
      r.Error(P(root, "store"), "store must be sqlite:PATH, sqlite::memory: or postgres://..., got '" + *s + "'");
    }
    out->store = *s;
  }
  CheckToolReferences(r, root, *out);
  // An MCP tool without its own timeout_ms takes its server's.
  for (ToolDef& tool : out->tools) {
    if (tool.backend.kind != ToolBackendConfig::Kind::kMcp || tool.configured.contains("timeout_ms")) continue;
    for (const McpServerConfig& server : out->mcp_servers) {
      if (server.name == tool.backend.spec.value("server", "")) tool.timeout_ms = server.timeout_ms;
    }
  }
  return diag.size() == errors_before;
}

Result<AgentConfig> LoadAgentConfigFile(const std::string& path) {
  Diagnostics diag;
  LocatedDoc doc = LoadYamlFile(path, diag);
  AgentConfig config;
  if (diag.empty()) {
    std::string base = std::filesystem::path(path).parent_path().string();
    ParseAgentConfig(doc, "", base.empty() ? "." : base, diag, &config);
  }
  if (!diag.empty()) return InvalidArgument(diag.Format());
  return config;
}

void DeepMerge(LocatedDoc& base, const std::string& base_root, const LocatedDoc& overlay_doc,
               const std::string& overlay_root) {
  const Json& overlay = overlay_doc.value.at(Json::json_pointer(overlay_root));
  Json::json_pointer target(base_root);
  if (!overlay.is_object() || !base.value.contains(target) || !base.value.at(target).is_object()) {
    base.value[target] = overlay;
    // The replaced subtree's marks now come from the overlay.
    for (auto it = base.marks.lower_bound(base_root + "/"); it != base.marks.end() && it->first.rfind(base_root + "/", 0) == 0;) {
      it = base.marks.erase(it);
    }
    for (const auto& [ptr, mark] : overlay_doc.marks) {
      if (ptr == overlay_root || ptr.rfind(overlay_root + "/", 0) == 0) {
        base.marks[base_root + ptr.substr(overlay_root.size())] = mark;
      }
    }
    return;
  }
  for (const auto& [key, value] : overlay.items()) {
    DeepMerge(base, JoinPointer(base_root, key), overlay_doc, JoinPointer(overlay_root, key));
  }
}

std::vector<std::string> AgentConfigWarnings(const AgentConfig& config) {
  std::vector<std::string> warnings;
  for (const IntentConfig& intent : config.intents) {
    if (intent.enforcement == IntentEnforcement::kAudit && !config.audit.enabled) {
      warnings.push_back("intent '" + intent.name + "' has enforcement: audit, but audit.enabled is false: a missing " +
                         "tool is only recorded (intent.missing); turn the audit on, or use enforcement: force");
    }
  }
  // Rails are opt-in, but an agent that writes should not let a reply claim a write that
  // did not happen, or show the person an internal tool name.
  std::vector<std::string> writes, untrusted;
  for (const ToolDef& tool : config.tools) {
    if (tool.Writes()) writes.push_back(tool.name);
    if (tool.trust == ToolTrust::kUntrusted) untrusted.push_back(tool.name);
  }
  auto some = [](const std::vector<std::string>& names) {
    return names.front() + (names.size() > 1 ? " and " + std::to_string(names.size() - 1) + " more" : "");
  };
  // Outside data and writes in one agent: what someone else wrote can steer a write.
  if (!untrusted.empty() && !writes.empty() && !config.untrusted_data.enabled) {
    warnings.push_back("tools whose results are outside data (" + some(untrusted) + ": trust untrusted) and tools that " +
                       "may write (" + some(writes) + ") but no untrusted_data: an instruction planted in what " +
                       untrusted.front() + " returns can make the model call a write with someone else's values; add " +
                       "`untrusted_data: {}` (docs/security.md, \"Prompt injection\"), or mark the tools `trust: trusted` " +
                       "if no one else writes what they return");
  }
  if (config.untrusted_data.enabled && untrusted.empty()) {
    warnings.push_back("untrusted_data is on but no tool is untrusted, so no result counts as outside data: mark the " +
                       std::string("tools that read mail, files, web pages or other people's messages `trust: untrusted`"));
  }
  if (!writes.empty()) {
    const std::string which = some(writes);
    if (config.rails.honest_claims.is_null()) {
      warnings.push_back("tools that may write (" + which + ": not marked readOnlyHint: true) but no " +
                         "rails.honest_claims: a reply claiming a write that did not happen reaches the person as " +
                         "fact; add `honest_claims: {}` under rails");
    }
    if (config.rails.no_internal_names.is_null()) {
      warnings.push_back("tools that may write (" + which + ": not marked readOnlyHint: true) but no " +
                         "rails.no_internal_names: a reply may show an internal tool name; add `no_internal_names: {}` " +
                         "under rails");
    }
  }
  // A tool nobody described: it may write (MCP's reading), yet it runs at once inside
  // the loop, before the reply is final, because only an explicit readOnlyHint: false
  // defers a tool. (An MCP tool's annotations come from its server's listing at start.)
  for (const ToolDef& tool : config.tools) {
    if (!tool.Writes() || tool.timing != ToolTiming::kImmediate || tool.configured.count("timing") ||
        !tool.annotations.empty() || tool.backend.kind == ToolBackendConfig::Kind::kMcp) {
      continue;
    }
    warnings.push_back("tool '" + tool.name + "' has no annotations and no timing, so it may write and runs at once " +
                       "inside the loop, before the reply is final; add `timing: deferred` (it then runs once, after " +
                       "the reply), `annotations: { readOnlyHint: true }` if it only reads, or `timing: immediate` if " +
                       "that is meant");
  }
  // A condition on an argument the schema does not require: a call that leaves it out
  // never waits for the person.
  for (const ToolDef& tool : config.tools) {
    const Json required = tool.input_schema.value("required", Json::array());
    for (const ApprovalCondition& c : tool.approval.when) {
      const std::string top = c.path.starts_with("$.") ? c.path.substr(2, c.path.find_first_of(".[", 2) - 2) : c.path;
      if (std::find(required.begin(), required.end(), Json(top)) == required.end()) {
        warnings.push_back("tool '" + tool.name + "': approval.when reads '" + c.path + "', which its input_schema " +
                           "does not require, so a call without " + top + " never waits for approval; add it to " +
                           "input_schema.required");
      }
    }
  }
  return warnings;
}

}  // namespace reins

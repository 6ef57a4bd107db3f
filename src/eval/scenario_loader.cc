#include <filesystem>
#include <cstdio>
#include <fstream>
#include <optional>

#include <yaml-cpp/yaml.h>

#include "config/agent_config_loader.h"
#include "config/config_reader.h"
#include "eval/scenario.h"

#include <re2/re2.h>

#include "model/sim_model.h"
#include "reins/clock.h"

namespace reins {
namespace {

constexpr std::string_view kTurnChecks[] = {
    "status", "reply_contains", "reply_not_contains", "reply_matches", "reply_not_matches",
    "first_sentence_matches", "first_sentence_not_matches", "tools_executed", "tools_not_executed",
    "tools_deferred", "tools_rejected", "tools_skipped", "clarification", "approval", "lease", "model_calls",
    "plan", "audit", "rails_fired", "notice_contains", "error_contains"};

std::string P(const std::string& base, const char* key) { return JoinPointer(base, key); }

Check ReadCheck(ConfigReader& r, const std::string& ptr, const std::string& key, bool final_block) {
  Check c;
  c.kind = key;
  c.value = *r.Get(JoinPointer(ptr, key));
  c.mark = r.doc().MarkOf(JoinPointer(ptr, key));
  if (!IsKnownCheck(key, final_block)) {
    std::vector<std::string_view> known(std::begin(kTurnChecks), std::end(kTurnChecks));
    if (final_block) known.push_back("invocations");
    std::optional<std::string_view> best = ClosestName(key, known);
    r.Error(JoinPointer(ptr, key), "unknown check '" + key + "'" +
                                       (best ? " (did you mean '" + std::string(*best) + "'?)" : std::string()));
  }
  if (key.find("matches") != std::string::npos) {
    if (c.value.is_string()) r.CheckRegex(JoinPointer(ptr, key), c.value.get<std::string>());
    else r.Error(JoinPointer(ptr, key), key + " takes a regex string");
  }
  return c;
}

std::vector<Check> ReadExpect(ConfigReader& r, const std::string& ptr, bool final_block) {
  std::vector<Check> checks;
  const Json& v = *r.Get(ptr);
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) checks.push_back(ReadCheck(r, ptr, key, final_block));
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      std::string ip = JoinPointer(ptr, i);
      if (!v[i].is_object()) {
        r.Error(ip, "each check must be a mapping");
        continue;
      }
      std::vector<std::string> keys;
      for (const auto& [key, value] : v[i].items()) {
        if (key != "dimension" && key != "critical") keys.push_back(key);
      }
      if (keys.size() != 1) {
        r.Error(ip, "each list item holds exactly one check (plus optional dimension and critical)");
        continue;
      }
      Check c = ReadCheck(r, ip, keys[0], final_block);
      c.dimension = r.String(ip, "dimension").value_or("");
      c.critical = r.String(ip, "critical").value_or("");
      checks.push_back(std::move(c));
    }
  } else {
    r.Error(ptr, "expect must be a mapping or a list of checks");
  }
  return checks;
}

void ReadTurn(ConfigReader& r, const std::string& tp, ScenarioTurn* t) {
  t->mark = r.doc().MarkOf(tp);
  if (!r.Mapping(tp, {"speaker", "roles", "say", "select", "approve", "page_context", "advance_ms", "model", "expect"}, "turn")) {
    return;
  }
  if (auto s = r.String(tp, "speaker")) t->input.speaker = *s;
  // The roles an API key would give the speaker (docs/security.md, "API keys").
  if (auto roles = r.StringList(tp, "roles")) t->input.roles = *roles;
  t->input.say = r.String(tp, "say");
  t->input.select = r.String(tp, "select");
  if (const Json* approve = r.Get(P(tp, "approve"))) {
    Result<ApprovalAnswer> answer = ApprovalAnswerFromJson(*approve);
    if (answer.ok()) {
      t->input.approve = std::move(answer).value();
    } else {
      r.Error(P(tp, "approve"), answer.status().message());
    }
  }
  int inputs = r.Has(tp, "say") + r.Has(tp, "select") + r.Has(tp, "approve");
  if (inputs != 1) r.Error(tp, "a turn needs exactly one of say, select or approve");
  if (r.Has(tp, "page_context")) {
    if (!r.IsMapping(P(tp, "page_context"))) r.Error(P(tp, "page_context"), "page_context must be a mapping");
    else t->input.page_context = *r.Get(P(tp, "page_context"));
  }
  t->advance_ms = r.Int(tp, "advance_ms", 0, int64_t{365} * 24 * 3600 * 1000).value_or(0);
  if (r.Has(tp, "model")) {
    CheckScriptedReplies(r, P(tp, "model"));
    t->model_replies = *r.Get(P(tp, "model"));
  }
  if (r.Has(tp, "expect")) t->expect = ReadExpect(r, P(tp, "expect"), false);
}

// `pointer` relative to `root` when it lies under it.
std::optional<std::string> Under(const std::string& pointer, const std::string& root) {
  if (pointer == root) return std::string();
  if (pointer.size() > root.size() && pointer.compare(0, root.size(), root) == 0 && pointer[root.size()] == '/') {
    return pointer.substr(root.size());
  }
  return std::nullopt;
}

// A scenario does not need the environment of the parts it replaces: the agent's model
// when it scripts one (a key or an address left unset is dropped, so a real model run
// falls back to OPENAI_API_KEY...), and a tool's backend when it gives fixtures for the
// tool (the backend becomes those fixtures, which is what runs). Every other unset
// variable is reported as in any config.
void JudgeUnsetVariables(const LocatedDoc& doc, LocatedDoc& agent_doc, const std::string& agent_root, Diagnostics& diag) {
  std::vector<UnsetVariable> agent_unset;  // pointers relative to the agent
  for (const UnsetVariable& u : doc.unset) {
    std::optional<std::string> rel = Under(u.pointer, "/agent_overrides");
    if (!rel && agent_root == "/agent") rel = Under(u.pointer, "/agent");
    if (rel) agent_unset.push_back({*rel, u.mark, u.name});
    else diag.Add(u.mark, u.Message());
  }
  if (agent_root.empty()) agent_unset.insert(agent_unset.end(), agent_doc.unset.begin(), agent_doc.unset.end());
  const Json* fixtures = doc.value.is_object() && doc.value.contains("fixtures") ? &doc.value["fixtures"] : nullptr;
  const bool scripts_model = doc.value.is_object() && doc.value.contains("model");
  for (const UnsetVariable& u : agent_unset) {
    Json* agent = agent_root.empty() ? &agent_doc.value : &agent_doc.value[Json::json_pointer(agent_root)];
    if (!agent->is_object()) break;
    std::optional<std::string> in_model = Under(u.pointer, "/model");
    if (scripts_model && in_model && !in_model->empty() && (*agent)["model"].is_object()) {
      (*agent)["model"].erase(in_model->substr(1, in_model->find('/', 1) - 1));
      continue;
    }
    size_t index = 0;
    char rest[2] = {};
    if (std::sscanf(u.pointer.c_str(), "/tools/%zu/backen%1[d]", &index, rest) == 2 && fixtures != nullptr &&
        fixtures->is_object() && (*agent)["tools"].is_array() && index < (*agent)["tools"].size()) {
      Json& tool = (*agent)["tools"][index];
      const std::string name = tool.value("name", "");
      if (fixtures->contains(name)) {
        tool["backend"] = {{"fixture", (*fixtures)[name]}};
        continue;
      }
    }
    diag.Add(u.mark, u.Message());
  }
}

// `person: {approves: [{name, args?}]}`: who answers the approvals the turns leave pending.
// A scripted reply's `when.after_tool` names a tool the agent has, or one the script's
// own replies call (a call of an unknown tool, on purpose): a typo ("find_patiant")
// would only surface as "scripted model has no reply" when the run gets there.
void CheckAfterTools(ConfigReader& r, const std::string& replies_ptr, const AgentConfig& agent) {
  const Json* replies = r.Get(replies_ptr);
  if (replies == nullptr || !replies->is_array() || agent.tools.empty()) return;
  std::vector<std::string_view> known;
  for (const ToolDef& t : agent.tools) known.push_back(t.name);
  for (const Json& reply : *replies) {
    if (!reply.is_object() || !reply.contains("tool_calls") || !reply["tool_calls"].is_array()) continue;
    for (const Json& call : reply["tool_calls"]) {
      if (call.is_object() && call.contains("name") && call["name"].is_string()) known.push_back(call["name"].get_ref<const std::string&>());
    }
  }
  for (size_t i = 0; i < replies->size(); ++i) {
    const Json& reply = (*replies)[i];
    if (!reply.is_object() || !reply.contains("when") || !reply["when"].is_object()) continue;
    const Json& after = reply["when"].value("after_tool", Json());
    if (!after.is_string() || std::find(known.begin(), known.end(), after.get<std::string>()) != known.end()) continue;
    const std::string name = after.get<std::string>();
    std::optional<std::string_view> best = ClosestName(name, known);
    r.Error(JoinPointer(JoinPointer(JoinPointer(replies_ptr, i), "when"), "after_tool"),
            "'" + name + "' is not a tool of the agent" + (best ? " (did you mean '" + std::string(*best) + "'?)" : std::string()));
  }
}

void ReadPerson(ConfigReader& r, const AgentConfig& agent, ScenarioPerson* person) {
  if (!r.Mapping("/person", {"approves"}, "person")) return;
  person->present = true;
  const Json* approves = r.Get("/person/approves");
  if (approves == nullptr) return;
  if (!approves->is_array()) return r.Error("/person/approves", "approves must be a list of calls {name, args}");
  for (size_t i = 0; i < approves->size(); ++i) {
    const std::string cp = JoinPointer("/person/approves", i);
    if (!r.Mapping(cp, {"name", "args"}, "approved call")) continue;
    const std::string name = r.String(cp, "name", true).value_or("");
    if (!name.empty() && !agent.tools.empty() && agent.FindTool(name) == nullptr) {
      r.Error(P(cp, "name"), "'" + name + "' is not a tool of the agent");
    }
    if (r.Has(cp, "args") && !r.IsMapping(P(cp, "args"))) r.Error(P(cp, "args"), "args must be a mapping (a subset of the call's arguments)");
    person->approves.push_back((*approves)[i]);
  }
}

}  // namespace

bool IsKnownCheck(const std::string& kind, bool final_block) {
  for (std::string_view k : kTurnChecks) {
    if (k == kind) return true;
  }
  return final_block && kind == "invocations";
}

bool IsScenarioFile(const std::string& path) {
  Result<std::string> text = ReadConfigText(path);
  if (!text.ok()) return false;
  try {
    YAML::Node root = YAML::Load(*text);
    return root.IsMap() && root["turns"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

Result<Scenario> LoadScenarioFile(const std::string& path) {
  Diagnostics diag;
  LocatedDoc doc = LoadYamlFile(path, diag, /*defer_unset=*/true);
  if (!diag.empty()) return InvalidArgument(diag.Format());
  ConfigReader r(doc, diag);
  Scenario s;
  s.file = path;
  std::string base = std::filesystem::path(path).parent_path().string();
  if (base.empty()) base = ".";
  if (!r.Mapping("", {"id", "title", "tags", "agent", "agent_overrides", "clock_start", "stream", "fixtures", "model", "turns",
                      "final", "person"},
                 "scenario")) {
    return InvalidArgument(diag.Format());
  }
  s.id = r.String("", "id", true).value_or("");
  s.title = r.String("", "title").value_or(s.id);
  s.tags = r.StringList("", "tags").value_or(std::vector<std::string>{});
  s.stream = r.Bool("", "stream").value_or(false);

  // The agent: a file (relative to this one) or an inline mapping; overrides merge in.
  LocatedDoc agent_doc;
  std::string agent_root, agent_dir = base;
  if (r.IsMapping("/agent")) {
    agent_doc = doc;
    agent_root = "/agent";
  } else if (auto agent_path = r.String("", "agent")) {
    std::filesystem::path ap = std::filesystem::path(base) / *agent_path;
    const size_t problems = diag.size();
    agent_doc = LoadYamlFile(ap.string(), diag, /*defer_unset=*/true);
    agent_dir = ap.parent_path().string();
    // An empty file, a scalar or a list is no agent: running it as an empty one would
    // report PASS for a scenario that tested nothing.
    if (diag.size() == problems && !agent_doc.value.is_object()) {
      diag.Add(agent_doc.MarkOf(""), "the agent file must hold an agent mapping (name, model, tools...), not " +
                                         DescribeType(agent_doc.value));
    }
  } else {
    r.Error("", r.Has("", "agent") ? "agent must be a file path or a mapping" : "missing required key 'agent'");
  }
  if (r.Has("", "agent_overrides")) {
    if (!r.IsMapping("/agent_overrides")) r.Error("/agent_overrides", "agent_overrides must be a mapping");
    else if (agent_doc.value.is_object()) DeepMerge(agent_doc, agent_root, doc, "/agent_overrides");
  }
  JudgeUnsetVariables(doc, agent_doc, agent_root, diag);
  if (agent_doc.value.is_object()) ParseAgentConfig(agent_doc, agent_root, agent_dir, diag, &s.agent);

  if (auto start = r.String("", "clock_start")) {
    if (!ParseIsoTime(*start, &s.clock_start_ms)) r.Error("/clock_start", "clock_start must look like 2026-01-01T12:00:00Z");
  } else {
    ParseIsoTime("2026-01-01T12:00:00Z", &s.clock_start_ms);
  }
  if (r.Has("", "fixtures") && !r.IsMapping("/fixtures")) r.Error("/fixtures", "fixtures must be a mapping of tool name to entries");
  if (const Json* fx = r.Get("/fixtures"); fx != nullptr && fx->is_object()) {
    for (const auto& [tool, entries] : fx->items()) {
      std::string fp = JoinPointer("/fixtures", tool);
      if (!s.agent.FindTool(tool) && !s.agent.tools.empty()) r.Error(fp, "fixtures for '" + tool + "', which the agent does not define");
      CheckFixtureEntries(r, fp);
      s.fixtures[tool] = entries;
    }
  }
  if (r.Has("", "model")) {
    std::string mp = "/model";
    if (r.Mapping(mp, {"provider", "replies", "seed", "intents", "faults"}, "scenario model")) {
      r.Enum(mp, "provider", {"scripted", "sim"});
      if (r.Has(mp, "replies")) {
        CheckScriptedReplies(r, P(mp, "replies"));
        CheckAfterTools(r, P(mp, "replies"), s.agent);
      }
      s.model = *r.Get(mp);
      if (Result<SimOptions> sim = SimOptionsFromJson(s.model); !sim.ok()) r.Error(mp, sim.status().message());
      if (r.Has(mp, "intents")) {
        const Json& intents = *r.Get(P(mp, "intents"));
        if (!intents.is_object()) r.Error(P(mp, "intents"), "intents must map a regex to a list of tool names");
        for (auto it = intents.begin(); intents.is_object() && it != intents.end(); ++it) {
          if (!RE2(it.key(), RE2::Quiet).ok()) r.Error(P(mp, "intents"), "invalid regex '" + it.key() + "'");
          if (!it.value().is_array()) r.Error(P(mp, "intents"), "intent '" + it.key() + "' must list tool names");
        }
      }
    }
  } else if (s.agent.model.provider == "scripted" && s.agent.model.options.contains("replies")) {
    s.model = {{"provider", "scripted"}, {"replies", s.agent.model.options["replies"]}};
  } else if (!IsHttpProvider(s.agent.model.provider)) {
    r.Error("", "missing required key 'model' (the scenario's scripted model; without one the agent's model must be "
                "openai or anthropic, and the scenario runs with --model agent or --replay)");
  }  // else s.model stays null: the scenario runs the agent's own model (eval/eval_model.h)
  if (const Json* turns = r.Get("/turns"); turns != nullptr && turns->is_array() && !turns->empty()) {
    for (size_t i = 0; i < turns->size(); ++i) {
      ScenarioTurn t;
      ReadTurn(r, JoinPointer("/turns", i), &t);
      s.turns.push_back(std::move(t));
    }
  } else {
    r.Error(r.Has("", "turns") ? "/turns" : "", "turns must be a non-empty list");
  }
  if (r.Has("", "final")) s.final_checks = ReadExpect(r, "/final", true);
  if (r.Has("", "person")) ReadPerson(r, s.agent, &s.person);
  if (!diag.empty()) return InvalidArgument(diag.Format());
  return s;
}

}  // namespace reins

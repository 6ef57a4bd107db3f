#include "policy/untrusted/outside_ledger.h"

#include <algorithm>

#include "domain/json_parse.h"
#include "domain/text.h"

namespace reins {
namespace {

// A source keeps this many of the calls a value came from: enough to say where.
constexpr size_t kSourcesPerValue = 4;

// What an untrusted call was about, in a few words: the file, page, channel or query it
// read ("bill-december-2023.txt"), else its first string argument.
std::string About(const ToolCall& call) {
  if (!call.args.is_object()) return "";
  const std::string* first = nullptr;
  for (const char* hint : {"path", "file", "url", "channel", "subject", "title", "name", "query", "id", "from"}) {
    for (const auto& [arg, value] : call.args.items()) {
      if (!value.is_string()) continue;
      if (first == nullptr) first = &value.get_ref<const std::string&>();
      if (AsciiLower(arg).find(hint) != std::string::npos) return Clipped(value.get<std::string>(), 60);
    }
  }
  return first != nullptr ? Clipped(*first, 60) : "";
}

// What of a result the model reads: its data and the words around it (not the
// envelope's own fields, such as next_action's "continue").
Json ReadableParts(const ResultEnvelope& result) {
  Json parts = Json::array({result.data});
  if (!result.error.empty()) parts.push_back(result.error);
  if (!result.instruction_for_ai.empty()) parts.push_back(result.instruction_for_ai);
  if (result.clarification) parts.push_back(ClarificationToJson(*result.clarification));
  return parts;
}

void AddOnce(Json& list, int index) {
  if (list.size() >= kSourcesPerValue) return;
  for (const Json& i : list) {
    if (i == index) return;
  }
  list.push_back(index);
}

}  // namespace

const Json* OutsideLedger::Of(const SessionState& session) {
  auto it = session.slots.find(std::string(kSlot));
  if (it == session.slots.end() || !it->second.is_object()) return nullptr;
  return &it->second;
}

bool OutsideLedger::Record(SessionState& session, const ToolCall& call, int turn, const Json& result, int limit) {
  Json& ledger = session.Slot(kSlot);
  if (!ledger.is_object()) ledger = {{"entered", turn}, {"sources", Json::array()}, {"values", Json::object()}};
  Json& sources = ledger["sources"];
  Json source = {{"tool", call.name}, {"call_id", call.id}, {"turn", turn}};
  if (std::string about = About(call); !about.empty()) source["about"] = std::move(about);
  const int index = static_cast<int>(sources.size());
  sources.push_back(std::move(source));
  if (Overflowed(ledger)) return false;
  Json& values = ledger["values"];
  bool overflowed = false;
  ForEachKey(result, [&](const std::string& key) {
    auto it = values.find(key);
    if (it != values.end()) {
      AddOnce(*it, index);
      return true;
    }
    if (values.size() >= static_cast<size_t>(limit)) {
      overflowed = true;
      return false;
    }
    values[key] = Json::array({index});
    return true;
  });
  if (overflowed) ledger["overflow"] = true;
  return overflowed;
}

const Json* OutsideLedger::SourcesOf(const Json& ledger, const std::string& key) {
  auto values = ledger.find("values");
  if (values == ledger.end() || !values->is_object()) return nullptr;
  auto it = values->find(key);
  return it == values->end() ? nullptr : &*it;
}

Json OutsideLedger::Source(const Json& ledger, int index) {
  auto sources = ledger.find("sources");
  if (sources == ledger.end() || !sources->is_array() || index < 0 || static_cast<size_t>(index) >= sources->size()) {
    return Json::object();
  }
  return (*sources)[static_cast<size_t>(index)];
}

Json OutsideLedger::Newest(const Json& ledger, size_t n) {
  Json out = Json::array();
  auto sources = ledger.find("sources");
  if (sources == ledger.end() || !sources->is_array()) return out;
  const size_t from = sources->size() > n ? sources->size() - n : 0;
  for (size_t i = from; i < sources->size(); ++i) out.push_back((*sources)[i]);
  return out;
}

void OutsideDataRecorder::Observe(TurnContext& ctx, const ProposedCall& p, const ResultEnvelope& result) const {
  if (p.tool == nullptr || p.tool->trust != ToolTrust::kUntrusted) return;
  if (OutsideLedger::Record(ctx.session, *p.call, ctx.result.turn_number, ReadableParts(result), limit_)) {
    ctx.Emit("untrusted.overflow", {{"count", (*OutsideLedger::Of(ctx.session))["values"].size()}, {"limit", limit_}});
  }
}

TrustedSources::TrustedSources(const TurnContext& ctx, const TrustedCorpus& agent) : agent_(agent) {
  seen_.AddText(ctx.user_text());
  const std::vector<Message>& history = ctx.history();
  for (size_t i = 0; i < history.size(); ++i) {
    const Message& m = history[i];
    // The person's own words and choices; the runtime's instructions have no speaker.
    if (m.role == Role::kUser && !m.speaker.empty() && !IsApprovalNote(history, i)) seen_.AddText(m.text);
    if (m.role != Role::kTool || m.is_error) continue;
    const ToolDef* tool = ctx.FindTool(m.tool_name);
    if (tool == nullptr || tool->trust != ToolTrust::kTrusted) continue;
    // What the call itself was sent, to leave out of what its result vouches for.
    std::vector<std::string> sent;
    for (size_t k = i; k-- > 0;) {
      const std::vector<ToolCall>& calls = history[k].tool_calls;
      auto call = std::find_if(calls.begin(), calls.end(), [&](const ToolCall& c) { return c.id == m.tool_call_id; });
      if (call == calls.end()) continue;
      ForEachKey(call->args, [&](const std::string& key) {
        sent.push_back(key);
        return true;
      });
      break;
    }
    Json value = ParseJsonOrDiscarded(m.text);
    if (value.is_discarded()) value = m.text;
    // A call that did not run has the runtime's words in its place (paused for the person,
    // skipped), which quote what the call was sent: no result vouches for anything there.
    if (value.is_object() && value.contains("success") && value["success"] == false) continue;
    ForEachKey(value, [&](const std::string& key) {
      if (std::find(sent.begin(), sent.end(), key) == sent.end()) seen_.AddKey(key);
      return true;
    });
  }
}

Json UntrustedTextsHolding(const TurnContext& ctx, const Json& ledger, std::string_view value) {
  Json found = Json::array();
  const std::string needle = AsciiLower(TrimmedSpace(value));
  for (const Message& m : ctx.history()) {
    if (m.role != Role::kTool) continue;
    const ToolDef* tool = ctx.FindTool(m.tool_name);
    if (tool == nullptr || tool->trust != ToolTrust::kUntrusted || !ContainsWord(AsciiLower(m.text), needle)) continue;
    Json source = {{"tool", m.tool_name}, {"call_id", m.tool_call_id}, {"turn", ctx.result.turn_number}};
    for (const Json& s : ledger.value("sources", Json::array())) {
      if (s.value("call_id", "") == m.tool_call_id) source["turn"] = s.value("turn", 0);
    }
    found.push_back(std::move(source));
  }
  return found;
}

TrustedCorpus AgentFileCorpus(const AgentConfig& config) {
  TrustedCorpus corpus;
  corpus.AddText(config.system_prompt);
  corpus.AddText(config.greeting);
  for (const ToolDef& tool : config.tools) {
    corpus.AddText(tool.title);
    corpus.AddText(tool.description);
  }
  for (const SafetyOverrideConfig& s : config.rails.safety_override) corpus.AddText(s.message);
  return corpus;
}

std::string SourceWords(const AgentConfig& config, const Json& source) {
  const std::string tool = source.value("tool", "");
  const ToolDef* def = config.FindTool(tool);
  std::string words = "the " + (def != nullptr ? def->title : DefaultToolTitle(tool)) + " result";
  if (std::string about = source.value("about", ""); !about.empty()) words += " for \u201c" + about + "\u201d";
  if (int turn = source.value("turn", 0); turn > 0) words += " (turn " + std::to_string(turn) + ")";
  return words;
}

}  // namespace reins

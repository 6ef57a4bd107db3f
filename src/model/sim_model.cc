#include "model/sim_model.h"

#include <algorithm>

#include <re2/re2.h>

#include "domain/json_parse.h"
#include "domain/text.h"
#include "model/schema_args.h"

namespace reins {
namespace {

// Where the current turn's messages begin: the user's request, not the runtime's own
// instructions added later (which are user messages too, without a speaker).
size_t TurnStart(const ModelRequest& r) {
  for (size_t i = r.messages.size(); i-- > 0;) {
    const Message& m = r.messages[i];
    if (m.role == Role::kUser && (m.text == r.user_text || !m.speaker.empty())) return i;
  }
  return 0;
}

Json ParseResult(const Message& m) {
  Json j = ParseJsonOrDiscarded(m.text);
  return j.is_object() ? j : Json::object();
}

void CollectIds(const Json& j, const std::string& key, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) CollectIds(v, k, out);
  } else if (j.is_array()) {
    for (const Json& v : j) CollectIds(v, key, out);
  } else if (j.is_string() && IsIdName(key)) {
    out.push_back(j.get<std::string>());
  }
}

// Ids the conversation has shown the model, newest first.
std::vector<std::string> KnownIds(const ModelRequest& r) {
  std::vector<std::string> ids;
  for (auto m = r.messages.rbegin(); m != r.messages.rend(); ++m) {
    if (m->role == Role::kTool) CollectIds(ParseResult(*m), "", ids);
  }
  return ids;
}

const ToolSpec* FindSpec(const ModelRequest& r, const std::string& name) {
  if (!r.tools) return nullptr;
  for (const ToolSpec& t : *r.tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<std::string> CalledThisTurn(const ModelRequest& r) {
  std::vector<std::string> names;
  for (size_t i = TurnStart(r); i < r.messages.size(); ++i) {
    for (const ToolCall& c : r.messages[i].tool_calls) names.push_back(c.name);
  }
  return names;
}

std::vector<std::string> SucceededThisTurn(const ModelRequest& r) {
  std::vector<std::string> names;
  for (size_t i = TurnStart(r); i < r.messages.size(); ++i) {
    if (r.messages[i].role == Role::kTool && !r.messages[i].is_error) names.push_back(r.messages[i].tool_name);
  }
  return names;
}

const Message* LastToolResultThisTurn(const ModelRequest& r) {
  if (r.messages.empty() || r.messages.back().role != Role::kTool) return nullptr;
  return &r.messages.back();
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// "Records a prayer request for the team." -> "recorded a prayer request for the team"
// (past) or "record a prayer request for the team": how a model talks about what a tool
// does, from its description. Empty when the description does not start with a verb
// ("Service times and parking").
std::string VerbPhrase(const std::string& description, bool as_past) {
  size_t space = description.find(' ');
  if (space == std::string::npos) return "";
  std::string verb = AsciiLower(description.substr(0, space));
  if (verb.size() < 3 || verb.back() != 's' || verb == "this" || verb == "was" || verb == "has") return "";
  auto ends = [&](const char* tail) {
    std::string t(tail);
    return verb.size() > t.size() && verb.compare(verb.size() - t.size(), t.size(), t) == 0;
  };
  if (ends("ies")) verb = verb.substr(0, verb.size() - 3) + "y";
  else if (ends("ches") || ends("shes") || ends("sses") || ends("xes")) verb.resize(verb.size() - 2);
  else verb.pop_back();
  std::string rest = description.substr(space);
  rest = rest.substr(0, rest.find_first_of(".;("));
  while (!rest.empty() && rest.back() == ' ') rest.pop_back();
  if (!as_past) return verb + rest;
  static const std::map<std::string, std::string> kIrregular = {
      {"send", "sent"}, {"find", "found"}, {"tell", "told"},   {"show", "shown"},    {"get", "got"},
      {"make", "made"}, {"run", "run"},    {"take", "taken"},  {"write", "written"}, {"pay", "paid"},
      {"buy", "bought"}, {"read", "read"}, {"submit", "submitted"}, {"flag", "flagged"}, {"log", "logged"},
      {"plan", "planned"}, {"stop", "stopped"}, {"ship", "shipped"}};
  std::string past;
  if (auto it = kIrregular.find(verb); it != kIrregular.end()) past = it->second;
  else if (verb.back() == 'e') past = verb + "d";
  else if (verb.back() == 'y' && verb.size() > 1 && std::string("aeiou").find(verb[verb.size() - 2]) == std::string::npos)
    past = verb.substr(0, verb.size() - 1) + "ied";
  else past = verb + "ed";
  return past + rest;
}

std::string WordsOf(const std::string& tool) {
  std::string words = tool;
  std::replace(words.begin(), words.end(), '_', ' ');
  return words;
}

bool IsLoopPurpose(Purpose p) { return p == Purpose::kChat || p == Purpose::kStep || p == Purpose::kGather; }

}  // namespace

const std::vector<std::string>& SimFaults::Names() {
  static const std::vector<std::string> kNames = {
      "lead_with_tool_result", "skip_clarification", "invent_ids",      "describe_instead_of_call",
      "skip_required_tool",    "leak_tool_names",    "claim_unperformed_action", "invalid_args",
      "malformed_json",        "answer_other_speaker", "follow_injection",       "ignore_forced_choice"};
  return kNames;
}

SimFaults SimFaults::Defaults() {
  return {{{"lead_with_tool_result", 0.5},
           {"skip_clarification", 0.3},
           {"invent_ids", 0.15},
           {"describe_instead_of_call", 0.4},
           {"skip_required_tool", 0.3},
           {"leak_tool_names", 0.2},
           {"claim_unperformed_action", 0.2},
           {"invalid_args", 0.1},
           {"malformed_json", 0.05},
           {"answer_other_speaker", 1.0},
           {"follow_injection", 0.5},
           {"ignore_forced_choice", 0.0}}};
}

Result<SimFaults> SimFaults::FromJson(const Json& j, const SimFaults& base) {
  SimFaults out = base;
  if (j.is_null()) return out;
  if (!j.is_object()) return InvalidArgument("sim faults must be a mapping of fault name to probability");
  for (const auto& [name, rate] : j.items()) {
    if (!Contains(Names(), name)) return InvalidArgument("unknown sim fault '" + name + "'");
    if (!rate.is_number() || rate.get<double>() < 0 || rate.get<double>() > 1) {
      return InvalidArgument("sim fault '" + name + "' must be a probability between 0 and 1");
    }
    out.rates[name] = rate.get<double>();
  }
  return out;
}

double SimFaults::Rate(const std::string& name) const {
  auto it = rates.find(name);
  return it == rates.end() ? 0.0 : it->second;
}

Json SimFaults::ToJson() const {
  Json j = Json::object();
  for (const std::string& name : Names()) j[name] = Rate(name);
  return j;
}

Result<SimOptions> SimOptionsFromJson(const Json& model) {
  SimOptions o;
  if (!model.is_object()) return o;
  if (model.contains("seed")) {
    if (!model["seed"].is_number_integer()) return InvalidArgument("sim seed must be an integer");
    o.seed = model["seed"].get<uint64_t>();
  }
  REINS_ASSIGN_OR_RETURN(o.faults, SimFaults::FromJson(model.value("faults", Json()), SimFaults::Defaults()));
  o.intents = model.value("intents", Json::object());
  o.replies = model.value("replies", Json::array());
  return o;
}

SimModel::SimModel(SimOptions options)
    : options_(std::move(options)), script_(options_.replies), rng_(options_.seed) {}

bool SimModel::Fault(const std::string& name) {
  // Always draw, so that setting one rate to zero leaves every other draw where it was
  // (fuzz shrinking relies on it).
  double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  FaultTally& t = tally_[name];
  ++t.opportunities;
  bool fired = u < options_.faults.Rate(name);
  if (fired) {
    ++t.fired;
    fired_.insert(name);
  }
  return fired;
}

ToolCall SimModel::MakeCall(const ModelRequest& request, const std::string& tool) {
  ToolCall call;
  call.name = tool;
  call.id = "sim_" + std::to_string(calls_) + "_" + tool;
  const ToolSpec* spec = FindSpec(request, tool);
  ArgHints hints{request.user_text, KnownIds(request), {}};
  call.args = spec != nullptr ? SampleArgs(spec->input_schema, hints, rng_) : Json::object();
  call.arguments_text = call.args.dump();
  return call;
}

// What a correct model does when no scripted reply fits: the next tool the request
// needs (intents, or a step that names its tools), else an answer.
ModelResponse SimModel::Improvise(const ModelRequest& request) {
  ModelResponse response;
  std::vector<std::string> wanted;
  for (const auto& [pattern, tools] : options_.intents.items()) {
    RE2 re(pattern, RE2::Quiet);
    if (!re.ok() || !RE2::PartialMatch(request.user_text, re)) continue;
    for (const Json& t : tools) {
      if (t.is_string() && !Contains(wanted, t.get<std::string>())) wanted.push_back(t.get<std::string>());
    }
  }
  if (request.purpose == Purpose::kStep && !request.messages.empty() && request.tools) {
    for (const ToolSpec& t : *request.tools) {
      if (request.messages.back().text.find(t.name) != std::string::npos && !Contains(wanted, t.name)) wanted.push_back(t.name);
    }
  }
  if (request.response_schema) {
    Json j;
    if (request.purpose == Purpose::kPlan && !wanted.empty()) {
      j["steps"] = Json::array();
      for (const std::string& t : wanted) {
        j["steps"].push_back({{"id", "s" + std::to_string(j["steps"].size() + 1)},
                              {"description", "Use " + t},
                              {"stepType", "tool"},
                              {"requiredTools", {t}}});
      }
    } else {
      ArgHints hints{request.user_text, KnownIds(request), {"accept", "completed", "passed"}};
      j = SampleArgs(*request.response_schema, hints, rng_);
    }
    response.json = j;
    response.text = j.dump();
    return response;
  }
  if (request.tool_choice.mode == ToolChoice::Mode::kNamed) {
    response.tool_calls.push_back(MakeCall(request, request.tool_choice.name));
    return response;
  }
  const Message* last = LastToolResultThisTurn(request);
  if (last != nullptr) {
    Json result = ParseResult(*last);
    if (result.value("next_action", "") == "clarification_needed" && result.contains("clarification")) {
      const Json& c = result["clarification"];
      response.text = c.value("question", "Could you tell me a bit more?");
      for (const Json& o : c.value("options", Json::array())) response.text += "\n- " + o.value("label", o.value("id", ""));
      return response;
    }
  }
  if (request.tool_choice.mode != ToolChoice::Mode::kNone) {
    std::vector<std::string> called = CalledThisTurn(request);
    for (const std::string& t : wanted) {
      if (Contains(called, t) || FindSpec(request, t) == nullptr) continue;
      response.tool_calls.push_back(MakeCall(request, t));
      return response;
    }
  }
  response.text = last != nullptr && !last->is_error ? "Thank you for your patience. Here is what I found and did."
                                                     : "Thank you for telling me. I'm here to help with that.";
  return response;
}

// The calls a model that does not wait for results would add now: the scenario's next
// scripted calls, else the next intended tool; ids it cannot know yet are guessed.
std::vector<ToolCall> SimModel::FollowUp(const ModelRequest& request, const std::vector<ToolCall>& now) {
  std::vector<ToolCall> next = script_.PeekFollowUp(request);
  if (next.empty()) {
    ModelRequest ahead = request;
    for (const ToolCall& c : now) ahead.messages.push_back(Message::Assistant("", {c}));
    ModelResponse r = Improvise(ahead);
    next = r.tool_calls;
  }
  std::vector<std::string> known = KnownIds(request);
  for (ToolCall& c : next) {
    c.id = "sim_" + std::to_string(calls_) + "_follow_" + c.name;
    if (!c.args.is_object()) continue;
    for (auto& [k, v] : c.args.items()) {
      if (!IsIdName(k) || !v.is_string()) continue;
      v = known.empty() ? "guess_" + std::to_string(rng_() % 1000) : known[rng_() % known.size()];
    }
    c.arguments_text = c.args.dump();
  }
  return next;
}

void SimModel::PerturbCalls(const ModelRequest& request, ModelResponse& response) {
  if (Fault("skip_required_tool")) {
    response.tool_calls.clear();
    response.text = "I've taken care of that for you.";
    return;
  }
  if (Fault("describe_instead_of_call")) {
    const ToolSpec* spec = FindSpec(request, response.tool_calls.front().name);
    std::string what = spec != nullptr ? VerbPhrase(spec->description, false) : "";
    response.text = "I'll use " + response.tool_calls.front().name + " to " + (what.empty() ? "help with that" : what) + ".";
    response.tool_calls.clear();
    return;
  }
  std::vector<ToolCall> follow = FollowUp(request, response.tool_calls);
  if (!follow.empty() && Fault("skip_clarification")) {
    for (ToolCall& c : follow) response.tool_calls.push_back(std::move(c));
  }
  PerturbArgs(request, response);
}

void SimModel::PerturbArgs(const ModelRequest& request, ModelResponse& response) {
  for (ToolCall& call : response.tool_calls) {
    if (!call.args_valid || !call.args.is_object()) continue;
    std::vector<std::string> id_args;
    for (const auto& [k, v] : call.args.items()) {
      if (IsIdName(k) && v.is_string()) id_args.push_back(k);
    }
    if (!id_args.empty() && Fault("invent_ids")) {
      const std::string& arg = id_args[rng_() % id_args.size()];
      std::string old = call.args[arg].get<std::string>();
      size_t cut = old.find('_');
      call.args[arg] = (cut == std::string::npos ? std::string("id") : old.substr(0, cut)) + "_sim" + std::to_string(rng_() % 10000);
    }
    const ToolSpec* spec = FindSpec(request, call.name);
    Json broken = call.args;
    std::mt19937_64 copy = rng_;
    if (spec != nullptr && BreakArgs(spec->input_schema, broken, copy) && Fault("invalid_args")) {
      BreakArgs(spec->input_schema, call.args, rng_);
    }
    call.arguments_text = call.args.dump();
  }
}

void SimModel::PerturbText(const ModelRequest& request, ModelResponse& response, bool may_call) {
  const Message* last = LastToolResultThisTurn(request);
  if (may_call && last != nullptr && ParseResult(*last).value("next_action", "") == "clarification_needed") {
    // A model that does not wait for the user's choice: it picks a candidate itself.
    Json options = ParseResult(*last)["clarification"].value("options", Json::array());
    std::vector<ToolCall> follow = FollowUp(request, {});
    if (!options.empty() && !follow.empty() && Fault("skip_clarification")) {
      std::string pick = options[rng_() % options.size()].value("id", "");
      for (ToolCall& c : follow) {
        for (auto& [k, v] : c.args.items()) {
          if (IsIdName(k) && v.is_string()) v = pick;
        }
        c.arguments_text = c.args.dump();
      }
      response.text.clear();
      response.tool_calls = std::move(follow);
      return;
    }
  }
  std::vector<std::string> succeeded = SucceededThisTurn(request);
  if (!succeeded.empty() && Fault("lead_with_tool_result")) {
    // The reply opens by restating what the tool did, before anything else.
    const ToolSpec* spec = FindSpec(request, succeeded.back());
    std::string action = spec != nullptr ? VerbPhrase(spec->description, true) : "";
    std::string lead = action.empty() ? "Here is what " + WordsOf(succeeded.back()) + " returned." : "I've " + action + ".";
    response.text = lead + " " + response.text;
  }
  if (request.tools && !request.tools->empty() && Fault("leak_tool_names")) {
    const std::string& name = succeeded.empty() ? (*request.tools)[rng_() % request.tools->size()].name : succeeded.back();
    response.text += " (I used the " + name + " tool for this.)";
  }
  if (request.tools) {
    std::vector<const ToolSpec*> not_done;
    for (const ToolSpec& t : *request.tools) {
      if (!Contains(succeeded, t.name) && !VerbPhrase(t.description, true).empty()) not_done.push_back(&t);
    }
    if (!not_done.empty() && Fault("claim_unperformed_action")) {
      const ToolSpec* t = not_done[rng_() % not_done.size()];
      response.text += " I've also " + VerbPhrase(t->description, true) + ".";
    }
  }
}

std::vector<PlantedInstruction> PlantedInstructions(const std::map<std::string, Json>& fixtures) {
  std::vector<PlantedInstruction> out;
  for (const auto& [tool, entries] : fixtures) {
    if (!entries.is_array()) continue;
    for (const Json& entry : entries) {
      const Json* injection = entry.is_object() && entry.contains("injection") ? &entry["injection"] : nullptr;
      if (injection == nullptr || !injection->is_object()) continue;
      PlantedInstruction p{tool, injection->value("instruction", ""), {}, injection->value("reply", "")};
      for (const Json& c : injection->value("calls", Json::array())) {
        const Json args = c.value("args", Json::object());
        p.calls.push_back(ToolCall{"", c.value("name", ""), args.dump(), args, true});
      }
      if (!p.instruction.empty()) out.push_back(std::move(p));
    }
  }
  return out;
}

const PlantedInstruction* SimModel::Planted(const ModelRequest& request) const {
  for (size_t i = TurnStart(request); i < request.messages.size(); ++i) {
    const Message& m = request.messages[i];
    if (m.role != Role::kTool) continue;
    for (const PlantedInstruction& p : options_.injections) {
      if (p.tool != m.tool_name || obeyed_.contains(p.instruction)) continue;
      const std::string escaped = Json(p.instruction).dump();  // as the result's JSON text holds it
      if (m.text.find(escaped.substr(1, escaped.size() - 2)) != std::string::npos) return &p;
    }
  }
  return nullptr;
}

void SimModel::Honour(const ModelRequest& request, ModelResponse& response) {
  const ToolChoice& choice = request.tool_choice;
  if (choice.mode == ToolChoice::Mode::kNamed) {
    std::erase_if(response.tool_calls, [&](const ToolCall& c) { return c.name != choice.name; });
    if (response.tool_calls.empty()) response.tool_calls.push_back(MakeCall(request, choice.name));
  } else if (choice.mode == ToolChoice::Mode::kRequired && response.tool_calls.empty() && request.tools &&
             !request.tools->empty()) {
    response.tool_calls.push_back(MakeCall(request, request.tools->front().name));
  }
  response.text.clear();
}

Task<Result<ModelResponse>> SimModel::Complete(const ModelRequest& request) {
  std::lock_guard lock(mu_);  // released when the body ends (no suspension before)
  ++calls_;
  fired_.clear();
  // Several speakers: a plausible model answers whoever reached it.
  if (request.purpose == Purpose::kChat) {
    std::string first, latest;
    for (const Message& m : request.messages) {
      if (m.role != Role::kUser || m.speaker.empty()) continue;
      if (first.empty()) first = m.speaker;
      latest = m.speaker;
    }
    if (!first.empty() && latest != first && !Fault("answer_other_speaker")) {
      ModelResponse refusal;
      refusal.text = "I'm sorry, I'm still helping " + first + " right now.";
      co_return refusal;
    }
  }
  // A planted instruction that asks for calls is obeyed first, before the person's
  // request (the worst case: the correct reply waits, unconsumed, for the next call).
  const bool may_call = IsLoopPurpose(request.purpose) && request.tool_choice.mode == ToolChoice::Mode::kAuto;
  const PlantedInstruction* planted = IsLoopPurpose(request.purpose) ? Planted(request) : nullptr;
  if (may_call && planted != nullptr && !planted->calls.empty() && Fault("follow_injection")) {
    obeyed_.insert(planted->instruction);
    ModelResponse obeyed;
    for (ToolCall c : planted->calls) {
      c.id = "sim_" + std::to_string(calls_) + "_planted_" + c.name;
      obeyed.tool_calls.push_back(std::move(c));
    }
    co_return obeyed;
  }
  const bool forced = IsLoopPurpose(request.purpose) && (request.tool_choice.mode == ToolChoice::Mode::kNamed ||
                                                         request.tool_choice.mode == ToolChoice::Mode::kRequired);
  std::optional<ModelResponse> scripted = script_.TryReply(request);
  ModelResponse response = scripted ? std::move(*scripted) : Improvise(request);
  // A forced tool choice comes back as that call unless the fault says otherwise (no
  // real provider returns text then).
  const bool honoured = forced && !Fault("ignore_forced_choice");
  if (honoured) Honour(request, response);
  if (request.response_schema) {
    if (Fault("malformed_json")) {
      std::string text = response.text.empty() ? "{\"steps\": [" : response.text;
      response.text = text.substr(0, text.size() / 2);
      response.json.reset();
    }
  } else if (IsLoopPurpose(request.purpose) && request.tool_choice.mode != ToolChoice::Mode::kNone) {
    if (honoured) {
      PerturbArgs(request, response);  // the forced call comes back; its arguments may still be wrong
    } else if (!response.tool_calls.empty()) {
      PerturbCalls(request, response);
    } else {
      PerturbText(request, response, true);
    }
  } else if (IsLoopPurpose(request.purpose)) {
    response.tool_calls.clear();  // tool choice none: a provider would not return calls
    PerturbText(request, response, false);
  }
  // An output-only goal: the planted words go into the reply.
  if (planted != nullptr && !planted->reply.empty() && response.tool_calls.empty() && !response.text.empty() &&
      Fault("follow_injection")) {
    obeyed_.insert(planted->instruction);
    response.text += " " + planted->reply;
  }
  if (IsLoopPurpose(request.purpose) && !response.text.empty()) {
    replies_.push_back({response.text, SucceededThisTurn(request), fired_});
  }
  co_return response;
}

}  // namespace reins

#include "reins/envelope.h"

#include <array>
#include <utility>

#include "domain/json_text.h"

namespace reins {
namespace {

constexpr std::array<std::string_view, 7> kEnvelopeKeys = {
    "success", "next_action", "data", "clarification", "error", "instruction_for_ai", "lease"};

bool IsEnvelopeKey(std::string_view key) {
  for (std::string_view k : kEnvelopeKeys) {
    if (k == key) return true;
  }
  return false;
}

// An object is an envelope when it says so (success / next_action), or when it only
// uses envelope keys and carries `data` (the "bare data" form of SCENARIOS.md).
bool LooksLikeEnvelope(const Json& raw) {
  if (!raw.is_object()) return false;
  if (raw.contains("success") || raw.contains("next_action")) return true;
  if (!raw.contains("data")) return false;
  for (const auto& [key, value] : raw.items()) {
    if (!IsEnvelopeKey(key)) return false;
  }
  return true;
}

ResultEnvelope Malformed(const std::string& why) {
  return ResultEnvelope::Failure("malformed tool result: " + why);
}

// Returns "" when the clarification is well-formed, else what is wrong.
std::string ParseClarification(const Json& j, Clarification* out) {
  if (!j.is_object()) return "clarification must be an object";
  if (auto it = j.find("type"); it != j.end()) {
    if (!it->is_string()) return "clarification.type must be a string";
    out->type = it->get<std::string>();
  }
  auto q = j.find("question");
  if (q == j.end() || !q->is_string() || q->get<std::string>().empty()) {
    return "clarification.question must be a non-empty string";
  }
  out->question = q->get<std::string>();
  auto opts = j.find("options");
  if (opts == j.end() || !opts->is_array() || opts->empty()) {
    return "clarification.options must be a non-empty list";
  }
  for (size_t i = 0; i < opts->size(); ++i) {
    const Json& o = (*opts)[i];
    std::string where = "clarification.options[" + std::to_string(i) + "]";
    if (!o.is_object()) return where + " must be an object";
    auto id = o.find("id");
    if (id == o.end() || !(id->is_string() || id->is_number_integer()) ||
        (id->is_string() && id->get<std::string>().empty())) {
      return where + " has no id";
    }
    ClarificationOption opt;
    opt.id = id->is_string() ? id->get<std::string>() : id->dump();
    for (const auto& o2 : out->options) {
      if (o2.id == opt.id) return where + " repeats id '" + opt.id + "'";
    }
    if (auto t = o.find("title"); t != o.end() && t->is_string()) opt.title = t->get<std::string>();
    if (opt.title.empty()) opt.title = opt.id;
    if (auto s = o.find("subtitle"); s != o.end() && s->is_string()) opt.subtitle = s->get<std::string>();
    if (auto c = o.find("confidence"); c != o.end()) {
      if (!c->is_number()) return where + ".confidence must be a number";
      opt.confidence = c->get<double>();
    }
    if (auto m = o.find("metadata"); m != o.end()) opt.metadata = *m;
    out->options.push_back(std::move(opt));
  }
  return "";
}

}  // namespace

std::string_view NextActionName(NextAction a) {
  switch (a) {
    case NextAction::kContinue: return "continue";
    case NextAction::kClarificationNeeded: return "clarification_needed";
    case NextAction::kComplete: return "complete";
    case NextAction::kError: return "error";
  }
  return "error";
}

bool ParseNextAction(std::string_view name, NextAction* a) {
  for (NextAction n : {NextAction::kContinue, NextAction::kClarificationNeeded, NextAction::kComplete,
                       NextAction::kError}) {
    if (NextActionName(n) == name) {
      *a = n;
      return true;
    }
  }
  return false;
}

ResultEnvelope ResultEnvelope::Failure(std::string error) {
  ResultEnvelope e;
  e.success = false;
  e.next_action = NextAction::kError;
  e.error = std::move(error);
  return e;
}

namespace {

// NormaliseToolResult's rules. `owned`, when given, is `raw` itself, which the caller is
// done with: the data is moved out of it instead of copied.
ResultEnvelope Normalise(const Json& raw, Json* owned) {
  ResultEnvelope e;
  if (!LooksLikeEnvelope(raw)) {
    if (raw.is_null()) {
      e.data = Json::object();
    } else if (owned != nullptr) {
      e.data = std::move(*owned);
    } else {
      e.data = raw;
    }
    return e;
  }
  bool has_action = false;
  if (auto it = raw.find("success"); it != raw.end()) {
    if (!it->is_boolean()) return Malformed("success must be true or false");
    e.success = it->get<bool>();
  }
  if (auto it = raw.find("next_action"); it != raw.end()) {
    if (!it->is_string() || !ParseNextAction(it->get<std::string>(), &e.next_action)) {
      return Malformed("unknown next_action " + it->dump() +
                       " (expected continue, clarification_needed, complete or error)");
    }
    has_action = true;
  }
  if (auto it = raw.find("data"); it != raw.end()) {
    if (owned != nullptr) {
      e.data = std::move(owned->at("data"));
    } else {
      e.data = *it;
    }
  }
  if (auto it = raw.find("error"); it != raw.end()) {
    if (!it->is_string()) return Malformed("error must be a string");
    e.error = it->get<std::string>();
  }
  if (auto it = raw.find("instruction_for_ai"); it != raw.end()) {
    if (!it->is_string()) return Malformed("instruction_for_ai must be a string");
    e.instruction_for_ai = it->get<std::string>();
  }
  if (auto it = raw.find("lease"); it != raw.end()) {
    if (!it->is_object() || !it->contains("domain") || !(*it)["domain"].is_string()) {
      return Malformed("lease must be {domain, ttl_s}");
    }
    LeaseRequest lease{(*it)["domain"].get<std::string>(), 0};
    if (auto ttl = it->find("ttl_s"); ttl != it->end()) {
      if (!ttl->is_number_integer() || ttl->get<int>() <= 0) {
        return Malformed("lease.ttl_s must be a positive integer");
      }
      lease.ttl_s = ttl->get<int>();
    }
    e.lease = lease;
  }
  if (e.next_action == NextAction::kClarificationNeeded) {
    auto it = raw.find("clarification");
    if (it == raw.end()) return Malformed("next_action is clarification_needed but no clarification given");
    Clarification c;
    if (std::string why = ParseClarification(*it, &c); !why.empty()) return Malformed(why);
    e.clarification = std::move(c);
  }
  // The two failure signals imply each other.
  if (!e.success && !has_action) e.next_action = NextAction::kError;
  if (e.next_action == NextAction::kError) e.success = false;
  if (!e.success && e.error.empty()) e.error = "the tool reported failure";
  return e;
}

}  // namespace

ResultEnvelope NormaliseToolResult(const Json& raw) { return Normalise(raw, nullptr); }
ResultEnvelope NormaliseToolResult(Json&& raw) { return Normalise(raw, &raw); }

Json ClarificationToJson(const Clarification& c) {
  Json options = Json::array();
  for (const ClarificationOption& o : c.options) {
    Json jo = {{"id", o.id}, {"title", o.title}};
    if (!o.subtitle.empty()) jo["subtitle"] = o.subtitle;
    if (o.confidence) jo["confidence"] = *o.confidence;
    if (!o.metadata.is_null()) jo["metadata"] = o.metadata;
    options.push_back(std::move(jo));
  }
  return {{"type", c.type}, {"question", c.question}, {"options", std::move(options)}};
}

// Members in the order of their keys, as the DOM writes them; what a result rarely has
// (a clarification, a lease) through its DOM.
std::string EnvelopeText(const ResultEnvelope& e) {
  std::string out;
  out.reserve(96);
  JsonObjectText o(out);
  if (e.clarification) o.Value("clarification", ClarificationToJson(*e.clarification));
  o.Value("data", e.data);
  if (!e.error.empty()) o.String("error", e.error);
  if (!e.instruction_for_ai.empty()) o.String("instruction_for_ai", e.instruction_for_ai);
  if (e.lease) o.Value("lease", Json{{"domain", e.lease->domain}, {"ttl_s", e.lease->ttl_s}});
  o.String("next_action", NextActionName(e.next_action));
  o.Bool("success", e.success);
  o.Close();
  return out;
}

Json EnvelopeToJson(const ResultEnvelope& e) {
  Json j = JsonObject("success", e.success, "next_action", NextActionName(e.next_action), "data", e.data);
  if (e.clarification) j["clarification"] = ClarificationToJson(*e.clarification);
  if (!e.error.empty()) j["error"] = e.error;
  if (!e.instruction_for_ai.empty()) j["instruction_for_ai"] = e.instruction_for_ai;
  if (e.lease) j["lease"] = {{"domain", e.lease->domain}, {"ttl_s", e.lease->ttl_s}};
  return j;
}

}  // namespace reins

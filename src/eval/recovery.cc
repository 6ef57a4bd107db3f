#include "eval/recovery.h"

#include <algorithm>

namespace reins {
namespace {

std::string List(const std::map<std::string, int>& tools) {
  std::string out;
  for (const auto& [tool, n] : tools) {
    if (!tool.empty()) out += (out.empty() ? "" : ", ") + tool;
  }
  return out;
}

int Total(const std::map<std::string, int>& counts) {
  int n = 0;
  for (const auto& [key, count] : counts) n += count;
  return n;
}

// The tools the model left uncalled that no forcing intent requires, and the intents
// that require one but only note it.
void Intents(const AgentEvidence& e, Json& features) {
  std::map<std::string, int> unforced;
  std::map<std::string, int> soft;  // intent name -> misses of its tools
  for (const auto& [tool, n] : e.not_called) {
    const IntentConfig* covering = nullptr;
    for (const IntentConfig& intent : e.agent->intents) {
      if (std::find(intent.required_tools.begin(), intent.required_tools.end(), tool) != intent.required_tools.end()) {
        covering = &intent;
      }
    }
    if (covering == nullptr) unforced[tool] += n;
    else if (covering->enforcement != IntentEnforcement::kForce) soft[covering->name] += n;
  }
  if (!e.not_called.empty() && e.agent->rails.act_not_describe.is_null()) {
    features.push_back({{"feature", "rails.act_not_describe"},
                        {"why", std::to_string(Total(e.not_called)) + " failed checks wanted " + List(e.not_called) +
                                    " run; a reply that describes or claims the call without making it gets one retry "
                                    "with the call forced (docs/act.md)"}});
  }
  if (!unforced.empty()) {
    features.push_back({{"feature", "intents"},
                        {"why", std::to_string(Total(unforced)) + " failed checks wanted " + List(unforced) +
                                    " run and the model answered without the call; an intent with these in required_tools "
                                    "(enforcement: force) retries with the call forced"}});
  }
  for (const auto& [name, n] : soft) {
    features.push_back({{"feature", "intents." + name + ".enforcement: force"},
                        {"why", std::to_string(n) + " failed checks wanted its tools run; it only notes the miss now"}});
  }
}

// Harm kind -> the agent-file setting that keeps it out, when the agent lacks it.
void Rails(const AgentEvidence& e, Json& features) {
  auto harms = [&](const char* kind) {
    auto it = e.harms.find(kind);
    return it == e.harms.end() ? std::map<std::string, int>{} : it->second;
  };
  const RailsConfig& rails = e.agent->rails;
  if (auto h = harms("write_with_unchosen_id"); !h.empty()) {
    features.push_back({{"feature", "entities.consumes"},
                        {"why", std::to_string(Total(h)) + " writes of " + List(h) +
                                    " used an id no tool produced and nobody chose; declaring the argument as a consumed "
                                    "entity lets only those through (I3)"}});
  }
  if (auto h = harms("internal_name_shown"); !h.empty() && rails.no_internal_names.is_null()) {
    features.push_back({{"feature", "rails.no_internal_names"},
                        {"why", std::to_string(Total(h)) + " replies showed " + List(h)}});
  }
  if (auto h = harms("claims_unperformed_action"); !h.empty()) {
    const bool on = !rails.honest_claims.is_null();
    features.push_back({{"feature", on ? "rails.honest_claims.claim_patterns" : "rails.honest_claims"},
                        {"why", std::to_string(Total(h)) + " replies claimed " + List(h) + " without the call" +
                                    (on ? ", in words its patterns do not list" : "")}});
  }
  if (auto h = harms("solution_before_empathy"); !h.empty()) {
    const bool on = !rails.empathy_first.is_null();
    features.push_back({{"feature", on ? "rails.empathy_first.result_opener_patterns" : "rails.empathy_first"},
                        {"why", std::to_string(Total(h)) + " replies to someone in distress opened with a result" +
                                    (on ? " its patterns did not recognise" : "")}});
  }
  if (auto h = harms("silent_write_failure"); !h.empty()) {
    features.push_back({{"feature", "timing: deferred"},
                        {"why", std::to_string(Total(h)) + " failed writes of " + List(h) +
                                    " went untold; a deferred write's failure note always reaches the user (I5)"}});
  }
}

}  // namespace

Json RecoveryHints(const std::vector<AgentEvidence>& agents) {
  Json out = Json::array();
  for (const AgentEvidence& e : agents) {
    if (e.agent == nullptr || e.runs == 0 || e.scripted_runs == 0) continue;
    const double governed = static_cast<double>(e.passed) / e.runs;
    const double scripted = static_cast<double>(e.scripted_passed) / e.scripted_runs;
    if (scripted - governed < kRecoveryGap) continue;
    Json features = Json::array();
    Intents(e, features);
    Rails(e, features);
    out.push_back({{"agent", e.file}, {"governed_pass_rate", governed}, {"scripted_pass_rate", scripted},
                   {"features", std::move(features)}});
  }
  return out;
}

}  // namespace reins

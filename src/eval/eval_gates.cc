#include "eval/eval_gates.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "eval/harms.h"

namespace reins {

Result<std::vector<std::pair<std::string, std::string>>> ParseNameValues(const std::string& text, const char* flag) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return InvalidArgument(std::string(flag) + " takes name=value,...; got '" + item + "'");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

namespace {

const Json* JudgedMode(const Json& report) {
  if (!report.contains("modes") || !report["modes"].is_array()) return nullptr;
  for (const char* governor : {"on", "off"}) {
    for (const Json& m : report["modes"]) {  // by reference: the pointer outlives the loop
      if (m.value("governor", "") == governor) return &m;
    }
  }
  return nullptr;
}

std::string Fixed(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", v);
  return text;
}

}  // namespace

Result<std::map<std::string, double>> ParseDimensionGates(const std::string& text) {
  REINS_ASSIGN_OR_RETURN(auto pairs, ParseNameValues(text, "--min-dimension"));
  std::map<std::string, double> gates;
  for (const auto& [name, value] : pairs) {
    char* end = nullptr;
    const double rate = std::strtod(value.c_str(), &end);
    if (end != value.c_str() + value.size() || rate < 0 || rate > 1) {
      return InvalidArgument("--min-dimension " + name + "=" + value + ": the rate must be between 0 and 1");
    }
    gates[name] = rate;
  }
  return gates;
}

namespace {

Result<int> Count(const std::string& flag, const std::string& name, const std::string& value) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || end != value.c_str() + value.size() || n < 0 || n > 1000000000) {
    return InvalidArgument(flag + " " + (name.empty() ? "" : name + "=") + value + ": the count must be a whole number >= 0");
  }
  return static_cast<int>(n);
}

}  // namespace

Result<std::map<std::string, int>> ParseCriticalGates(const std::string& text) {
  REINS_ASSIGN_OR_RETURN(auto pairs, ParseNameValues(text, "--max-critical"));
  std::map<std::string, int> gates;
  for (const auto& [tag, value] : pairs) {
    REINS_ASSIGN_OR_RETURN(gates[tag], Count("--max-critical", tag, value));
  }
  return gates;
}

Result<std::map<std::string, int>> ParseHarmGates(const std::string& text) {
  std::map<std::string, int> gates;
  if (text.find('=') == std::string::npos) {
    REINS_ASSIGN_OR_RETURN(gates[""], Count("--max-harm", "", text));
    return gates;
  }
  REINS_ASSIGN_OR_RETURN(auto pairs, ParseNameValues(text, "--max-harm"));
  for (const auto& [kind, value] : pairs) {
    const auto& kinds = HarmKinds();
    const std::string& named = kind;  // clang before 16 lets no lambda capture a structured binding
    if (std::none_of(kinds.begin(), kinds.end(), [&named](const HarmKind& k) { return named == k.name; })) {
      std::string known;
      for (const HarmKind& k : kinds) known += std::string(known.empty() ? "" : ", ") + k.name;
      return InvalidArgument("--max-harm: no harm is called '" + kind + "'; the harms are " + known);
    }
    REINS_ASSIGN_OR_RETURN(gates[kind], Count("--max-harm", kind, value));
  }
  return gates;
}

Json JudgeGates(const EvalGates& gates, const Json& report) {
  Json out = Json::array();
  const Json* m = JudgedMode(report);
  if (m == nullptr) return out;
  auto add = [&](std::string gate, bool passed, std::string detail) {
    out.push_back({{"gate", std::move(gate)}, {"passed", passed}, {"detail", std::move(detail)}});
  };
  if (gates.min_pass) {
    const double rate = m->value("pass_rate", 0.0);
    add("--min-pass " + Fixed(*gates.min_pass), rate >= *gates.min_pass, "pass rate " + Fixed(rate));
  }
  const Json dimensions = m->value("dimensions", Json::object());
  for (const auto& [name, least] : gates.min_dimension) {
    const std::string gate = "--min-dimension " + name + "=" + Fixed(least);
    if (!dimensions.contains(name)) {
      add(gate, false, "no check carries dimension '" + name + "' in these scenarios");
      continue;
    }
    const double average = dimensions[name].value("average", 0.0);
    add(gate, average >= least, name + " average " + Fixed(average));
  }
  const Json critical = m->value("critical", Json::object());
  for (const auto& [tag, most] : gates.max_critical) {
    const int n = critical.value(tag, 0);
    add("--max-critical " + tag + "=" + std::to_string(most), n <= most, std::to_string(n) + " " + tag + " failures");
  }
  const Json harms = m->value("harms", Json::object());
  for (const auto& [kind, most] : gates.max_harm) {
    const int n = kind.empty() ? m->value("harms_total", 0) : harms.value(kind, 0);
    add("--max-harm " + (kind.empty() ? "" : kind + "=") + std::to_string(most), n <= most,
        std::to_string(n) + (kind.empty() ? " harms" : " " + kind + " harms"));
  }
  return out;
}

}  // namespace reins
